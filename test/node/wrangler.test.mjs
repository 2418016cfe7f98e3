// The wrangler launcher (scripts/dev/wrangler.mjs) that `npm start`, the e2e
// tests and the benches share: secrets reach wrangler through a private env
// file, never its command line, which every local user reads in `ps`. A fake
// `wrangler` stands in for the real one and reports what it was given.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatEnvFile } from "../../scripts/dev/dev-vars.mjs";
import { assertPortFree, freePort } from "../../scripts/dev/http.mjs";
import { chooseModel } from "../../scripts/dev/stack.mjs";
import { parseEventLine } from "../../scripts/dev/events.mjs";
import { groupAlive, raisedFileLimit, spawnWrangler, withRaisedFileLimit, wranglerArgs } from "../../scripts/dev/wrangler.mjs";
import { freshAgentJwk } from "./support/fake-agent.mjs";

// Serves, on its --port, its own argv, every --env-file it was given (text and mode), whether
// it was told to write its debug log file, and the variables that keep wrangler from reaching out.
const FAKE_WRANGLER = `#!/usr/bin/env node
const { createServer } = require("node:http");
const { readFileSync, statSync } = require("node:fs");
const argv = process.argv.slice(2);
const files = [];
argv.forEach((arg, i) => {
  if (arg === "--env-file") files.push({ path: argv[i + 1], mode: statSync(argv[i + 1]).mode & 0o777, text: readFileSync(argv[i + 1], "utf8") });
});
const port = Number(argv[argv.indexOf("--port") + 1]);
const writeLogs = process.env.WRANGLER_WRITE_LOGS;
const lookups = Object.fromEntries(["CLOUDFLARE_CF_FETCH_ENABLED", "WRANGLER_HIDE_BANNER", "WRANGLER_SEND_METRICS"].map((name) => [name, process.env[name]]));
createServer((req, res) => res.end(JSON.stringify({ argv, files, pid: process.pid, writeLogs, lookups }))).listen(port, "127.0.0.1");
`;

let root;
let home;
const stops = [];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fake-wrangler-root-"));
  home = mkdtempSync(join(tmpdir(), "fake-wrangler-home-"));
  mkdirSync(join(root, "node_modules", ".bin"), { recursive: true });
  writeFileSync(join(root, "node_modules", ".bin", "wrangler"), FAKE_WRANGLER);
  chmodSync(join(root, "node_modules", ".bin", "wrangler"), 0o755);
});

afterEach(async () => {
  while (stops.length) await stops.pop()();
  rmSync(root, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

async function launch(options) {
  const port = await freePort();
  const wrangler = spawnWrangler({ root, port, inspectorPort: await freePort(), logFile: join(home, "wrangler.log"), ...options });
  stops.push(() => wrangler.stop());
  for (let i = 0; i < 200; i++) {
    try {
      return { wrangler, report: /** @type {any} */ (await (await fetch(`http://127.0.0.1:${port}/`)).json()) };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`the fake wrangler did not answer; its output:\n${wrangler.logTail()}`);
}

describe("spawnWrangler", () => {
  it("passes secrets in a 0600 env file, never on the command line, and removes the file when stopped", async () => {
    const signingKey = await freshAgentJwk("a2a-launcher");
    const { d } = JSON.parse(signingKey);
    const apiKey = "sk-launcher-test-0123456789";
    const { wrangler, report } = await launch({
      vars: { GATEKEEPER_ORIGINS: '["http://127.0.0.1:8790"]', OPENAI_MODEL: "m" },
      secrets: { A2A_SIGNING_KEY: signingKey, OPENAI_API_KEY: apiKey },
    });

    // What `ps` shows: the process's own command line, as the kernel holds it.
    const cmdline = readFileSync(`/proc/${report.pid}/cmdline`, "utf8");
    expect(cmdline).toContain("--var\0GATEKEEPER_ORIGINS:");
    for (const secret of [d, apiKey]) {
      expect(cmdline).not.toContain(secret);
      expect(report.argv.join(" ")).not.toContain(secret);
    }
    // The secrets reached wrangler through the last --env-file, readable by this user only.
    expect(report.files).toHaveLength(1);
    const [file] = report.files;
    expect(file.mode).toBe(0o600);
    expect(file.text).toContain(`OPENAI_API_KEY='${apiKey}'`);
    expect(file.text).toContain(d);

    await wrangler.stop();
    expect(groupAlive(wrangler.pgid)).toBe(false);
    expect(existsSync(file.path)).toBe(false);
  });

  it("puts the caller's env files first and its own secrets file last (later files win), at the path asked for", async () => {
    const devVars = join(home, "dev.vars");
    writeFileSync(devVars, "GATEKEEPER_ORIGINS='[]'\n", { mode: 0o600 });
    const secretsFile = join(home, "wrangler-secrets.env");
    writeFileSync(secretsFile, "left over by a killed run\n", { mode: 0o644 });
    const { wrangler, report } = await launch({ envFiles: [devVars], secretsFile, secrets: { OPENAI_API_KEY: "sk-x" } });
    expect(report.files.map((f) => f.path)).toEqual([devVars, secretsFile]);
    expect(report.files[1]).toMatchObject({ mode: 0o600, text: "OPENAI_API_KEY='sk-x'\n" });
    await wrangler.stop();
    expect(existsSync(secretsFile)).toBe(false);
    expect(existsSync(devVars)).toBe(true);
  });

  it("tells wrangler not to copy every line into its own debug log file, unless the developer asked for it", async () => {
    const { report } = await launch({});
    expect(report.writeLogs).toBe("false");
    const before = process.env.WRANGLER_WRITE_LOGS;
    process.env.WRANGLER_WRITE_LOGS = "true";
    try {
      const { report: asked } = await launch({});
      expect(asked.writeLogs).toBe("true");
    } finally {
      if (before === undefined) delete process.env.WRANGLER_WRITE_LOGS;
      else process.env.WRANGLER_WRITE_LOGS = before;
    }
  });

  it("tells wrangler to make no outbound lookup: no Request.cf fetch, no banner (its update check), no metrics", async () => {
    const { report } = await launch({});
    expect(report.lookups).toEqual({ CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true", WRANGLER_SEND_METRICS: "false" });
  });

  it("writes no file and passes no --env-file when there are no secrets (wrangler then reads .dev.vars)", async () => {
    const { report } = await launch({ vars: { OPENAI_MODEL: "m" } });
    expect(report.files).toEqual([]);
  });
});

// Prints two event lines as workerd's console.log reaches wrangler's stdout: the first cut in
// two chunks with a stderr warning landing in between, the second ended by CRLF; then serves.
const CHATTY_WRANGLER = `#!/usr/bin/env node
const { createServer } = require("node:http");
const event = (n) => JSON.stringify({ type: "dynamicagents.event", v: 1, event: "turn.started", eventId: "e" + n, at: "2026-12-02T05:00:00.000Z", data: { instanceId: "é" + n } });
const first = event(1);
const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
process.stdout.write("[wrangler:info] Ready\\n" + first.slice(0, 20));
setTimeout(() => {
  process.stderr.write("[wrangler:warn] something\\n");
  setTimeout(() => {
    process.stdout.write(first.slice(20) + "\\n" + event(2) + "\\r\\n");
    createServer((req, res) => res.end("{}")).listen(port, "127.0.0.1");
  }, 50);
}, 50);
`;

describe("spawnWrangler's output", () => {
  it("hands each whole line to onLine, stdout and stderr read apart, so the Worker's event lines arrive intact", async () => {
    writeFileSync(join(root, "node_modules", ".bin", "wrangler"), CHATTY_WRANGLER);
    const lines = [];
    await launch({ onLine: (line) => lines.push(line) });
    for (let i = 0; i < 100 && lines.length < 4; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toContain("[wrangler:info] Ready");
    expect(lines).toContain("[wrangler:warn] something");
    const events = lines.map(parseEventLine).filter(Boolean);
    expect(events.map((e) => [e?.eventId, e?.data.instanceId])).toEqual([
      ["e1", "é1"],
      ["e2", "é2"],
    ]);
  });
});

describe("the open-file limit wrangler starts with", () => {
  // A shell that lowers its soft limit and then runs `argv`: what a launcher under a low `ulimit -n` would pass on.
  const underLowLimit = (argv) =>
    execFileSync("/bin/sh", ["-c", 'ulimit -S -n 256; exec "$@"', "sh", ...argv], { encoding: "utf8" })
      .trim()
      .split("\n");
  const limits = ["/bin/sh", "-c", "ulimit -S -n; ulimit -H -n"];
  const hard = execFileSync(limits[0], limits.slice(1), { encoding: "utf8" }).trim().split("\n")[1];

  it.skipIf(hard !== "unlimited" && Number(hard) <= 256)("is raised to the hard limit by withRaisedFileLimit, from whatever soft limit it inherits", () => {
    expect(underLowLimit(limits)).toEqual(["256", hard]);
    const [file, argv] = withRaisedFileLimit(limits[0], limits.slice(1));
    expect(underLowLimit([file, ...argv])).toEqual([hard, hard]);
    expect(raisedFileLimit()).toBe(hard === "unlimited" ? Infinity : Number(hard));
  });

  it("is the hard limit in the spawned wrangler, which is the process group's leader itself (the shell execs it)", async () => {
    const { wrangler, report } = await launch({ vars: { OPENAI_MODEL: "m" } });
    expect(report.pid).toBe(wrangler.pgid);
    expect(readFileSync(`/proc/${report.pid}/cmdline`, "utf8").split("\0")).toContain(join(root, "node_modules", ".bin", "wrangler"));
    const line = readFileSync(`/proc/${report.pid}/limits`, "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const [, soft, max] = line?.split(/\s{2,}/) ?? [];
    expect(soft).toBe(max);
    await wrangler.stop();
    expect(groupAlive(wrangler.pgid)).toBe(false);
  });
});

describe("freePort", () => {
  // A port from the ephemeral range can go to any socket's bind(0) or connect() before wrangler binds it.
  it("gives a free port from below the kernel's ephemeral range, which no other socket is handed on its own", async () => {
    const [ephemeralLow] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    const ports = [];
    for (let i = 0; i < 20; i++) ports.push(await freePort());
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(1024);
      expect(port).toBeLessThan(ephemeralLow);
      await assertPortFree(port, "test", "");
    }
  });
});

describe("wranglerArgs", () => {
  it("names another Worker's config with --config when asked", () => {
    expect(wranglerArgs({ port: 1, inspectorPort: 2 })).not.toContain("--config");
    const args = wranglerArgs({ port: 1, inspectorPort: 2, config: "bench/floor/wrangler.jsonc" });
    expect(args.slice(0, 3)).toEqual(["dev", "--config", "bench/floor/wrangler.jsonc"]);
  });

  it("refuses a secret-looking variable on the command line", () => {
    for (const name of ["A2A_SIGNING_KEY", "OPENAI_API_KEY", "SOME_TOKEN", "DB_PASSWORD"]) {
      expect(() => wranglerArgs({ port: 1, inspectorPort: 2, vars: { [name]: "s3cret" } })).toThrow(/looks like a secret/);
    }
    expect(wranglerArgs({ port: 1, inspectorPort: 2, vars: { GATEKEEPER_ORIGINS: "[]" } })).toContain("GATEKEEPER_ORIGINS:[]");
  });
});

describe("formatEnvFile", () => {
  it("quotes each value literally and escapes `$`, which wrangler's --env-file would expand", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${X}` is the input under test
    expect(formatEnvFile({ A: '{"k":"v"}', B: "it's", C: "cost $HOME ${X} \\$Y" })).toBe(`A='{"k":"v"}'\nB=\`it's\`\nC='cost \\$HOME \\\${X} \\\\$Y'\n`);
  });

  it("refuses what it cannot write faithfully, without quoting the value", () => {
    for (const value of ["two\nlines", "ends with \\", `'\`"`]) {
      expect(() => formatEnvFile({ OPENAI_API_KEY: value })).toThrow(/^OPENAI_API_KEY cannot be written/);
    }
  });
});

describe("chooseModel (npm start)", () => {
  it("passes a real model's key and base URL from the environment as secrets, never as vars", async () => {
    const model = await chooseModel({ OPENAI_BASE_URL: "https://llm.example/v1?key=gw-secret", OPENAI_MODEL: "m", OPENAI_API_KEY: "sk-env" }, {});
    expect(model.secrets).toEqual({ OPENAI_BASE_URL: "https://llm.example/v1?key=gw-secret", OPENAI_API_KEY: "sk-env" });
    expect(model.vars).toEqual({ OPENAI_MODEL: "m" });
  });

  it("refuses a base URL with a user or password, without quoting it", async () => {
    await expect(chooseModel({ OPENAI_BASE_URL: "https://me:pw-secret@llm.example/v1", OPENAI_MODEL: "m" }, {})).rejects.toThrow(/holds a user or password/);
    await expect(chooseModel({ OPENAI_BASE_URL: "https://me:pw-secret@llm.example/v1", OPENAI_MODEL: "m" }, {})).rejects.not.toThrow(/pw-secret/);
  });
});
