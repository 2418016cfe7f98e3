// `npm start`'s port check (scripts/dev/stack.mjs): before anything starts, every port
// the stack needs is tried, and one run names each that is taken with the flag that
// moves it, rather than one per run.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PortsInUse, closeServer, freePort, listen } from "../../scripts/dev/http.mjs";
import { createStack } from "../../scripts/dev/stack.mjs";

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

function stackOn(ports) {
  const home = mkdtempSync(join(tmpdir(), "stack-ports-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  // No OPENAI_BASE_URL: the stand-in model's port is one of those checked.
  const stack = createStack({ root: ROOT, home, ports, env: {}, identity: { key: "ports-test" } });
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
