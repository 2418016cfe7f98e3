// `npm start` end to end, as a newcomer runs it: no network, no accounts, the
// offline stand-in model. Every run goes through the real path (gatekeeper
// token → edge → Durable Object → Workflow → signed push, verified by the
// gatekeeper; the answer streamed meanwhile over SSE) and must leave nothing running. Everything it creates lives in a
// temporary --home on free ports, so a developer's own .dev/, .dev.vars,
// .wrangler/state and port 8787 are never touched.
import { chatCompletionBody, chatCompletionReply } from "../../../src/testing/chat-completion.ts";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARRIVED } from "../../../scripts/dev/chat.mjs";
import { parseDotenv } from "../../../scripts/dev/dev-vars.mjs";
import { closeServer, freePort, listen } from "../../../scripts/dev/http.mjs";
import { groupAlive } from "../../../scripts/dev/wrangler.mjs";
import { canReadCommandLines, commandLinesHolding } from "../support/proc.mjs";

const ROOT = new URL("../../..", import.meta.url).pathname;
const RUN_TIMEOUT_MS = 180_000;
const MARK = "[offline stand-in model]";

let home;
let ports;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "npm-start-e2e-"));
  ports = { worker: await freePort(), gatekeeper: await freePort(), model: await freePort(), mcp: await freePort() };
});

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

/**
 * Runs `npm start -- <args>` with this file's home and ports, optionally
 * feeding `input` on stdin; bounded in time (the whole process group is
 * killed if it overruns). `extraEnv` is added to the environment.
 * @param {string[]} args
 * @param {{ input?: string, extraEnv?: Record<string, string> }} [options]
 */
function npmStart(args, { input, extraEnv = {} } = {}) {
  const env = { ...process.env };
  // Offline by construction: whatever model the developer configured is not used here.
  for (const name of ["OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_FALLBACK_MODEL"]) delete env[name];
  Object.assign(env, extraEnv);
  const child = spawn(
    "npm",
    [
      "start",
      "--silent",
      "--",
      "--home",
      home,
      "--port",
      String(ports.worker),
      "--gatekeeper-port",
      String(ports.gatekeeper),
      "--model-port",
      String(ports.model),
      "--mcp-port",
      String(ports.mcp),
      ...args,
    ],
    { cwd: ROOT, env, detached: true, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  if (input !== undefined) child.stdin.end(input);
  else child.stdin.end();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-(/** @type {number} */ (child.pid)), "SIGKILL");
      } catch {
        // already gone
      }
    }, RUN_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, all: `${stdout}\n${stderr}` });
    });
  });
}

/** The run said it stopped wrangler's whole process group, and that group is really gone. */
function expectNothingLeft(run) {
  const match = /stopped wrangler dev \(process group (\d+), nothing left\)/.exec(run.all);
  expect(match, run.all).not.toBeNull();
  expect(groupAlive(Number(match?.[1]))).toBe(false);
}

const explain = (run) =>
  `exit ${run.code} (${run.signal ?? "no signal"})\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}\n--- wrangler log\n${tail(join(home, "wrangler.log"))}`;

function tail(file) {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-40).join("\n");
  } catch {
    return "(no log)";
  }
}

describe("npm start -- --once", () => {
  it("completes a turn with the assistant: the reply on stdout, exit 0, nothing left running", async () => {
    const run = await npmStart(["--once", "hello"]);
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout.trim().startsWith(MARK), explain(run)).toBe(true);
    expect(run.stdout).toContain("Assistant's offline stand-in");
    // Banner and progress go to stderr, so stdout is the reply alone.
    expect(run.stdout.trim().split("\n")).toHaveLength(1);
    // The answer streamed there first, as the agent wrote it.
    expect(run.stderr).toMatch(/^assistant ▹ \[offline stand-in model\] Assistant's offline stand-in/m);
    expect(run.stderr).toContain("pinned on first use");
    expect(run.stderr).toContain("assistant (Assistant), researcher (Researcher): signed cards verified against the pin");
    // The tenants come from the deployment's own registry, and the conformance tenant waits for CONFORMANCE=1.
    expect(run.stderr).toContain(
      "registry    reference/tenants.ts (beside wrangler.jsonc's main reference/worker.ts) serves assistant, researcher; not now, their enabled(env) false with wrangler.jsonc vars and the dev secrets: conformance",
    );
    expectNothingLeft(run);
  });

  it("refuses a tenant the registry does not list, saying where the list came from, before starting anything", async () => {
    const run = await npmStart(["--once", "hello", "--tenant", "weather"]);
    expect(run.code, explain(run)).toBe(2);
    expect(run.stderr).toContain(
      `unknown tenant "weather": the tenant registry reference/tenants.ts (beside wrangler.jsonc's main reference/worker.ts) lists assistant, researcher, conformance; choose assistant or researcher`,
    );
    expect(run.all).not.toContain("starting wrangler dev");
  });

  it("gives the assistant the dev MCP server: the stand-in calls its devtools__ tools and quotes them", async () => {
    const run = await npmStart(["--once", "count these five words please"]);
    expect(run.code, explain(run)).toBe(0);
    const mcpUrl = `http://127.0.0.1:${ports.mcp}/mcp`;
    expect(run.stderr).toContain(`mcp         the agents that read MCP_SERVERS use the dev MCP server devtools at ${mcpUrl}, tools roll_dice, count_words`);
    expect(run.stderr).toContain(`MCP_ALLOWLIST ["http://127.0.0.1:${ports.mcp}"]`);
    // Needs core's MCP client (src/mcp): the Worker connects, lists the tools, and the stand-in calls each once.
    expect(run.stdout, explain(run)).toMatch(/I used the MCP tools? .*devtools__(roll_dice|count_words) \("[^"]+"\)/);
    expect(run.stdout).toMatch(/devtools__count_words \("5 words, \d+ characters"\)/);
    expect(run.stdout).toMatch(/devtools__roll_dice \("rolled 1d2: [12] \(total [12]\)"\)/);
    expectNothingLeft(run);
  });

  it("completes a delegating turn with the researcher, showing its progress, the agent's key matching the pin from the first run", async () => {
    const run = await npmStart(["--once", "compare A2A and MCP", "--tenant", "researcher"]);
    expect(run.code, explain(run)).toBe(0);
    expect(run.stderr).toMatch(/card key a2a-\S+ matches the pin of/);
    // A round ran subtasks in subagents: its statusUpdate push was verified and shown before the reply.
    expect(run.stderr).toMatch(/^ {2}· .*round 1/m);
    expect(run.stderr).toMatch(/^researcher ▹ \[offline stand-in model\] Researcher's offline stand-in/m);
    expect(run.stdout.trim().startsWith(MARK), explain(run)).toBe(true);
    expect(run.stdout).toContain("Researcher's offline stand-in");
    expect(run.stdout).toMatch(/\d+ delegated subtasks? reported: \[round 1\] \S+ .*→ done/);
    expectNothingLeft(run);
  });
});

describe("npm start (chat, input piped)", () => {
  it("takes turns at both tenants, lists the caller's tasks and quits cleanly", async () => {
    const run = await npmStart([], { input: "hello from the chat\n/tenant researcher\nwhat is A2A?\n/tasks\n/quit\n" });
    expect(run.code, explain(run)).toBe(0);
    // Streamed as it was written, then the reply of record (the verified push) in one short line: the answer is printed once.
    expect(run.stdout).toMatch(new RegExp(`^assistant ▹ \\[offline stand-in model\\] .*"hello from the chat".*\nassistant ▸ ${ARRIVED}$`, "m"));
    expect(run.stdout.match(/"hello from the chat"/g)).toHaveLength(1);
    expect(run.stdout).toContain("now talking to researcher");
    expect(run.stdout).toMatch(new RegExp(`^researcher ▹ \\[offline stand-in model\\] .*"what is A2A\\?".*\nresearcher ▸ ${ARRIVED}$`, "m"));
    // The researcher's tasks of this caller: the --once turn above and this one, newest first.
    expect(run.stdout).toMatch(
      /your tasks at researcher \(2 of 2, newest first\):\n +\S+ +completed +.* what is A2A\?\n +\S+ +completed +.* compare A2A and MCP/,
    );
    expect(run.stdout).not.toContain("refused a push");
    expectNothingLeft(run);
  });

  it("asks before saving a note, takes the piped answer, and the conversation's next turn lists the note", async () => {
    const run = await npmStart([], { input: "remember to buy milk\napprove\nlist my notes\n/quit\n" });
    expect(run.code, explain(run)).toBe(0);
    // The approval request arrived as a verified push and was shown with its options.
    expect(run.stdout, explain(run)).toContain(
      'assistant ? May I run save_note with {"text":"to buy milk"}?\n    1. Approve (approve)\n    2. Reject (reject)',
    );
    // Approved: the tool ran and the turn completed with its result, streamed after the answer too (SubscribeToTask).
    expect(run.stdout).toMatch(
      new RegExp(`^assistant ▹ \\[offline stand-in model\\] .*I called save_note, which returned \\{"saved":"to buy milk".*\nassistant ▸ ${ARRIVED}$`, "m"),
    );
    // The next line continued the same conversation (one conversation line only) and read the note back.
    expect(run.stdout.match(/conversation \S+ with assistant/g)).toHaveLength(1);
    expect(run.stdout).toMatch(
      new RegExp(
        `^assistant ▹ \\[offline stand-in model\\] .*"list my notes".*I called list_notes, which returned \\{"notes":\\["to buy milk"\\]\\}.*\nassistant ▸ ${ARRIVED}$`,
        "m",
      ),
    );
    expect(run.stdout).not.toContain("refused a push");
    expectNothingLeft(run);
  });

  it("/forget erases the conversation with its note, and the next line starts an empty one; /forget-me the rest", async () => {
    const run = await npmStart([], { input: "remember to buy bread\napprove\n/forget\nlist my notes\n/forget-me\n/quit\n" });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout, explain(run)).toMatch(/forgot conversation \S+ with assistant: 1 tasks, \d+ messages, 1 plugin rows\n/);
    // The next line is a conversation of its own, and the note saved in the erased one is gone (notes of this caller's other conversations stay).
    const after = run.stdout.slice(run.stdout.indexOf("forgot conversation"));
    expect(after.match(/^ +conversation \S+ with assistant/gm)).toHaveLength(1);
    expect(after).toMatch(/^assistant ▹ \[offline stand-in model\] .*"list my notes". I called list_notes, which returned \{"notes":\[/m);
    expect(after).not.toContain("to buy bread");
    expect(after).toMatch(/forgot everything you left at assistant: \d+ tasks, \d+ messages, \d+ plugin rows\n/);
    expect(run.stdout).not.toContain("refused a push");
    expectNothingLeft(run);
  });
});

describe("trust on first use, with the real Worker", () => {
  it("refuses the agent once its key changed, says how to reset, and pins the new key after --unpin", async () => {
    const devVars = join(home, "dev.vars");
    // As if someone regenerated the key: drop it, and npm start writes a fresh one.
    writeFileSync(devVars, readFileSync(devVars, "utf8").replace(/^A2A_SIGNING_KEY=.*\n/m, ""));
    const refused = await npmStart(["--once", "hello"]);
    expect(refused.code, explain(refused)).toBe(1);
    expect(refused.stderr).toContain(
      `REFUSED: the agent at http://127.0.0.1:${ports.worker} presents a card key other than the one this gatekeeper pinned on first use`,
    );
    // The kid names the key (its thumbprint), so a new key changes both.
    expect(refused.stderr).toMatch(/changed: +kid \S+ → \S+; public key \S+ → \S+/);
    expect(refused.stderr).toContain(`npm start -- --home ${home} --port ${ports.worker} --unpin`);
    expect(refused.stdout).toBe("");
    expectNothingLeft(refused);

    const repinned = await npmStart(["--once", "hello again", "--unpin"]);
    expect(repinned.code, explain(repinned)).toBe(0);
    expect(repinned.stderr).toContain("pinned on first use");
    expect(repinned.stdout).toContain(MARK);
    expectNothingLeft(repinned);
  });
});

describe("secrets", () => {
  it.runIf(canReadCommandLines)("reach the Worker through files: never a command line, never wrangler's log", async () => {
    // A "real" model from the environment, as a developer sets one: its key must reach the Worker.
    const apiKey = `sk-e2e-${randomUUID()}`;
    const signingD = JSON.parse(parseDotenv(readFileSync(join(home, "dev.vars"), "utf8")).A2A_SIGNING_KEY).d;
    /** @type {{ authorization: Array<string | undefined>, exposed: string[] }} */
    const seen = { authorization: [], exposed: [] };
    const model = createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      seen.authorization.push(req.headers.authorization);
      // The Worker is up and calling: every process of the stack is running now.
      seen.exposed.push(...commandLinesHolding(apiKey), ...commandLinesHolding(signingD));
      const sent = chatCompletionReply(chatCompletionBody({ content: "the e2e model answers" }, "e2e"), JSON.parse(body).stream === true);
      res.setHeader("content-type", sent.contentType);
      res.end(sent.body);
    });
    const modelPort = await listen(model, 0, "the e2e model", "");
    try {
      const run = await npmStart(["--once", "hello"], {
        extraEnv: { OPENAI_BASE_URL: `http://127.0.0.1:${modelPort}/v1`, OPENAI_MODEL: "e2e", OPENAI_API_KEY: apiKey },
      });
      expect(run.code, explain(run)).toBe(0);
      expect(run.stdout).toContain("the e2e model answers");
      expect(seen.authorization).toContain(`Bearer ${apiKey}`);
      expect(seen.exposed).toEqual([]);
      const log = readFileSync(join(home, "wrangler.log"), "utf8");
      expect(log).not.toContain(apiKey);
      expect(log).not.toContain(signingD.slice(0, 12));
      expect(run.all).not.toContain(apiKey);
      // The file that carried the environment's secrets is gone with the stack.
      expect(existsSync(join(home, "wrangler-secrets.env"))).toBe(false);
      expectNothingLeft(run);
    } finally {
      await closeServer(model);
    }
  });
});
