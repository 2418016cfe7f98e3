// `npm start`'s port check (scripts/dev/stack.mjs): before anything starts, every port
// the stack needs is tried, and one run names each that is taken with the flag that
// moves it, rather than one per run.
import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PortInUse, PortsInUse, closeServer, freePort, listen } from "../../scripts/dev/http.mjs";
import { addTenant } from "../../cli/add-tenant.mjs";
import { createRepository } from "../../cli/new-repo.mjs";
import { createStack } from "../../scripts/dev/stack.mjs";
import { workerReads } from "../../scripts/dev/tenants.mjs";

const ROOT = new URL("../..", import.meta.url).pathname;
const cleanups = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()();
});

/** A port something else listens on, for as long as the test runs. */
async function takenPort() {
  const server = createServer();
  const port = await listen(server, 0, "a squatter", "");
  cleanups.push(() => closeServer(server));
  return port;
}

function stackOn(ports, root = ROOT) {
  const home = mkdtempSync(join(tmpdir(), "stack-ports-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  // No OPENAI_BASE_URL: the stand-in model's port is one of those checked.
  const stack = createStack({ root, home, ports, env: {}, identity: { key: "ports-test" } });
  cleanups.push(() => stack.stop());
  return { stack, home };
}

describe("the port check of npm start", () => {
  it("names every busy port at once, each with the flag that moves it, and starts nothing", async () => {
    const ports = { worker: await takenPort(), gatekeeper: await takenPort(), model: await freePort(), mcp: await freePort() };
    const { stack, home } = stackOn(ports);
    const refused = await stack.start().then(
      () => undefined,
      (error) => error,
    );
    expect(refused).toBeInstanceOf(PortsInUse);
    expect(refused.ports).toEqual([ports.worker, ports.gatekeeper]);
    expect(refused.message).toMatch(new RegExp(`^ +${ports.worker} +the Worker +moved with --port N$`, "m"));
    expect(refused.message).toMatch(new RegExp(`^ +${ports.gatekeeper} +the dev gatekeeper +moved with --gatekeeper-port N$`, "m"));
    // The free ones are not named, and nothing was started or written.
    expect(refused.message).not.toContain(String(ports.model));
    expect(refused.message).not.toContain(String(ports.mcp));
    expect(readdirSync(home)).toEqual([]);
    expect(existsSync(join(home, "gatekeeper"))).toBe(false);
  });

  it("refuses two servers given the same port, naming both flags", async () => {
    const port = await freePort();
    const { stack } = stackOn({ worker: await freePort(), gatekeeper: port, model: await freePort(), mcp: port });
    await expect(stack.start()).rejects.toThrow(`--gatekeeper-port and --mcp-port both name port ${port}`);
  });
});

/** A starter as `dynamicagents new` writes it, with this checkout's node_modules (its wrangler's esbuild). */
async function starter() {
  const dir = mkdtempSync(join(tmpdir(), "stack-starter-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, "agents");
  await createRepository({ dir: root });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  return root;
}

describe("the dev MCP server of npm start", () => {
  it("is the Worker's only when its own code reads MCP_SERVERS: the reference's assistant does, a starter's MCP tenant does", async () => {
    expect(await workerReads(ROOT, "MCP_SERVERS")).toBe(true);
    const root = await starter();
    // src/mcp.ts reads it, but no tenant imports it yet.
    expect(await workerReads(root, "MCP_SERVERS")).toBe(false);
    addTenant({ root, tenant: "travel", kind: "mcp" });
    expect(await workerReads(root, "MCP_SERVERS")).toBe(true);
  });

  it("is neither started nor its port checked in a starter whose tenants read no MCP servers", async () => {
    const root = await starter();
    const ports = { worker: await takenPort(), gatekeeper: await freePort(), model: await freePort(), mcp: await takenPort() };
    const refused = await stackOn(ports, root)
      .stack.start()
      .then(
        () => undefined,
        (error) => error,
      );
    // One port taken, not two: the Worker's alone.
    expect(refused).toBeInstanceOf(PortInUse);
    expect(refused).not.toBeInstanceOf(PortsInUse);
    expect(refused.port).toBe(ports.worker);
    expect(refused.message).not.toContain("the dev MCP server");
    // Once a tenant reads MCP servers, its port is the dev MCP server's again.
    addTenant({ root, tenant: "travel", kind: "mcp" });
    const again = await stackOn(ports, root)
      .stack.start()
      .then(
        () => undefined,
        (error) => error,
      );
    expect(again.ports).toEqual([ports.worker, ports.mcp]);
  });
});
