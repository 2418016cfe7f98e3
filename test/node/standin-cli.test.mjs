// `npm run standin-model` (scripts/dev/standin-cli.mjs): the stand-in model on
// its own — it prints its URL, answers a chat completion, and stops on Ctrl-C.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { STANDIN_MARK, STANDIN_MODEL_ID } from "../../scripts/dev/standin-model.mjs";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "scripts", "dev", "standin-cli.mjs");
const children = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** Starts the script; `output()` is everything it wrote so far, `exited` its exit code. */
function run(args) {
  const child = spawn(process.execPath, [SCRIPT, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  child.stderr.on("data", (chunk) => (out += chunk));
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, output: () => out };
}

async function until(predicate, what, output) {
  for (let i = 0; i < 200; i++) {
    const found = predicate();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not happen; output so far:\n${output()}`);
}

describe("npm run standin-model", () => {
  it("prints its URL, answers, and stops on SIGINT", async () => {
    const proc = run(["--port", "0"]);
    const baseUrl = await until(() => /offline stand-in model {2}(http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(proc.output())?.[1], "the URL line", proc.output);
    expect(proc.output()).toContain(`--var OPENAI_MODEL:${STANDIN_MODEL_ID}`);
    expect(proc.output()).toContain(`FETCH_ALLOWLIST:["${new URL(baseUrl).origin}"]`);

    const models = /** @type {any} */ (await (await fetch(`${baseUrl}/models`)).json());
    expect(models.data[0].id).toBe(STANDIN_MODEL_ID);
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: STANDIN_MODEL_ID, messages: [{ role: "user", content: "hello" }] }),
    });
    expect(response.status).toBe(200);
    const completion = /** @type {any} */ (await response.json());
    expect(completion.choices[0].message.content.startsWith(STANDIN_MARK)).toBe(true);
    await until(() => proc.output().includes("→ stop"), "the call's log line", proc.output);

    proc.child.kill("SIGINT");
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toContain("stopped the stand-in model (calls answered: 1)");
  });

  it("refuses a port in use, naming --port", async () => {
    const taken = createServer();
    await new Promise((resolve) => taken.listen(0, "127.0.0.1", () => resolve(undefined)));
    try {
      const port = /** @type {import("node:net").AddressInfo} */ (taken.address()).port;
      const proc = run(["--port", String(port)]);
      expect(await proc.exited).toBe(2);
      expect(proc.output()).toMatch(new RegExp(`port ${port} .*choose another with --port`));
    } finally {
      await new Promise((resolve) => taken.close(() => resolve(undefined)));
    }
  });

  it("refuses a bad --port", async () => {
    const proc = run(["--port", "eighty"]);
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toContain("--port must be a port number");
  });
});
