// A human in the loop survives a Worker restart (issue 13: "an evicted object
// or a restarted Worker loses nothing"). The reference `assistant` saves a
// note only once the user approves it (reference/plugins/notes.ts). Driven
// through the real zero-trust path: `wrangler dev --local`, a loopback
// gatekeeper that mints the callers' tokens, serves its JWKS and takes the
// pushes, and a fake OpenAI-compatible model (bench/lib/gatekeeper.mjs) that
// calls `save_note`. The Worker's whole process group is SIGKILLed and started
// again on the same port and storage (bench/lib/host.mjs):
//   1. while the task waits for the approval: after the restart the object
//      still holds the request, takes the answer, and the parked turn goes on;
//   2. right after the answer was accepted, while the resumed round waits on
//      the model's follow-up (the tool has run, the turn has not finished):
//      the object's reconcile pass finds the turn lost and re-drives it, and
//      the tool-call journal hands back the result instead of saving again.
// Either way the task completes, the model's follow-up carries the tool's
// result, and the note was saved exactly once (a later turn lists it once).
// (The answer's reply leaves only after the turn's Workflow was sent its wake,
// and locally the resumed round is already running by then, so a kill after
// the reply does not lose the wake itself: the resend of a lost one is a spec,
// test/hitl.spec.ts "a wake that did not arrive is sent again".)
// Nothing is asserted about how long recovery took beyond the timeouts; it is
// printed.
import { mkdtempSync, rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE } from "../../../src/a2a/wire.ts";
import { chatCompletionBody } from "../../../src/testing/chat-completion.ts";
import { textOf } from "../../../scripts/dev/standin-model.mjs";
import { freshSigningJwk } from "../../../scripts/keys.mjs";
import { startGatekeeper } from "../../../bench/lib/gatekeeper.mjs";
import { createHost } from "../../../bench/lib/host.mjs";
import { sleep } from "../../../bench/lib/net.mjs";
import { pushHeaderProblems } from "../../../bench/lib/turns.mjs";

const ROOT = new URL("../../..", import.meta.url).pathname;
const MODEL = "hitl-e2e";
/** What a user asks to note, and what they ask to see the notes: the fake model keys its answers on these. */
const NOTE_ASK = /^remember to (.+)$/;
const LIST_ASK = "what are my notes?";
/**
 * The recovery window of the second case: the reconcile pass runs every 30 s
 * while a turn is open (DEFAULT_RECOVERY_POLICY), and a turn found lost is
 * re-driven within about 90 s of that; twice that, and some.
 */
const RECOVERY_TIMEOUT_MS = 200_000;
const say = (line) => process.stderr.write(`[hitl-restart] ${line}\n`);

/**
 * What the fake model saw of one user message (a note to save, or a listing):
 * every request answering it, and the tool results those requests carried,
 * in order (a retried or re-driven request repeats the same one).
 * @typedef {{ epoch: number, at: number, results: string[], held: boolean }} Seen
 * @typedef {{ requests: Seen[] }} Ask
 */
/** @type {Map<string, Ask>} */
const asks = new Map();
/** @type {{ at: number, caseName: string, headers: import("node:http").IncomingHttpHeaders, body: any }[]} */
const pushes = [];
/** Which Worker process is serving: bumped at each kill, so a request says which process sent it. */
let epoch = 0;

const askOf = (key) => {
  let ask = asks.get(key);
  if (!ask) asks.set(key, (ask = { requests: [] }));
  return ask;
};

/**
 * What a model request answers: the newest user message that asks to note
 * or to list (an approval's answer reaches the model as the tool's outcome,
 * not as user text), and the tool results that followed it. Undefined for a
 * request that is no turn's (a compaction's summary, say).
 * @param {string} body
 */
function readRequest(body) {
  const request = JSON.parse(body);
  /** @type {{ role: string, content: unknown }[]} */
  const messages = request.messages ?? [];
  const at = messages.findLastIndex((m) => m.role === "user" && isAsk(textOf(m.content).trim()));
  if (at < 0 || !(request.tools ?? []).some((t) => t.function?.name === "save_note")) return undefined;
  const results = messages
    .slice(at + 1)
    .filter((m) => m.role === "tool")
    .map((m) => textOf(m.content));
  return { asked: textOf(messages[at].content).trim(), results };
}
const isAsk = (text) => NOTE_ASK.test(text) || text === LIST_ASK;

/**
 * The one model follow-up to leave unanswered: the one carrying `asked`'s
 * tool result, in the process that is about to be killed. Its Seen is
 * recorded with `held`, so the test knows the tool had run by then.
 * @type {{ asked: string, epoch: number } | undefined}
 */
let holding;

/** @param {string} body */
function holdModel(body) {
  const seen = readRequest(body);
  if (!holding || !seen || seen.asked !== holding.asked || !seen.results.length || epoch !== holding.epoch) return false;
  askOf(seen.asked).requests.push({ epoch, at: performance.now(), results: seen.results, held: true });
  return true;
}

/**
 * The assistant's model: to "remember to X" it calls `save_note` with X; once
 * the request carries the tool's result, it says so. To LIST_ASK it calls
 * `list_notes`, then quotes them.
 * @param {string} body
 */
function answerModel(body) {
  const reply = (/** @type {import("../../../src/testing/chat-completion.ts").ChatReply} */ answer) => ({
    status: 200,
    body: JSON.stringify(chatCompletionBody(answer, MODEL)),
  });
  const seen = readRequest(body);
  if (!seen) return reply({ content: "summary" });
  const { asked, results } = seen;
  askOf(asked).requests.push({ epoch, at: performance.now(), results, held: false });
  const note = NOTE_ASK.exec(asked)?.[1];
  if (!results.length) return reply({ toolCalls: [note ? { name: "save_note", arguments: { text: note } } : { name: "list_notes", arguments: {} }] });
  return reply({ content: note ? `noted: ${results.at(-1)}` : `your notes: ${results.at(-1)}` });
}

/** @param {{ url: URL, headers: import("node:http").IncomingHttpHeaders, body: string }} push */
function answerPush({ url, headers, body }) {
  pushes.push({ at: performance.now(), caseName: url.searchParams.get("case") ?? "", headers, body: JSON.parse(body) });
  return 200;
}

/** @type {Awaited<ReturnType<typeof startGatekeeper>>} */
let gatekeeper;
/** @type {Awaited<ReturnType<typeof createHost>>} */
let host;
const home = mkdtempSync(join(tmpdir(), "hitl-restart-"));
const runId = Math.floor(Math.random() * 36 ** 4).toString(36);

beforeAll(async () => {
  gatekeeper = await startGatekeeper({ answerModel, answerPush, holdModel });
  const signing = await freshSigningJwk();
  host = await createHost({
    root: ROOT,
    gatekeeper,
    expectedTurns: 10,
    logDir: home,
    vars: { GATEKEEPER_ORIGINS: JSON.stringify([gatekeeper.origin]), OPENAI_BASE_URL: gatekeeper.modelBaseUrl, OPENAI_MODEL: MODEL },
    secrets: { A2A_SIGNING_KEY: JSON.stringify(signing), OPENAI_API_KEY: "hitl-restart" },
  });
  await host.start();
}, 150_000);

afterAll(async () => {
  await host?.stop();
  await gatekeeper?.close();
  rmSync(home, { recursive: true, force: true });
});

/** Polls `find` until it returns something, or fails naming `what` after `ms`. */
async function until(find, ms, what) {
  const deadline = performance.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s (the Worker's log: ${host.logFiles.at(-1)})\n${host.logTail()}`);
    await sleep(100);
  }
}

/** SIGKILLs the Worker's process group and starts a fresh one on the same port and storage; resolves once it serves. */
async function crashAndRestart() {
  const killedAt = performance.now();
  const port = await host.kill();
  epoch++;
  await host.start(port);
  say(`killed and restarted on the same storage in ${((performance.now() - killedAt) / 1000).toFixed(1)} s`);
  return performance.now();
}

const statusPushes = (caseName, taskId) => pushes.filter((p) => p.caseName === caseName && p.body.statusUpdate?.taskId === taskId);
const taskPushes = (caseName, taskId) => pushes.filter((p) => p.caseName === caseName && p.body.task?.id === taskId);

/**
 * Sends "remember to <note>" as a caller of its own (one per case, so one
 * notes table per case) with a push config naming the case,
 * and waits for the task to ask for the approval. Returns the caller, the
 * task and the request as its `statusUpdate` push announced it.
 */
async function parkedNote(caseName, note) {
  const caller = await host.callerFor(`hitl-${runId}-${caseName}`);
  const { task } = await caller.sendMessage(`remember to ${note}`, `${gatekeeper.pushUrl}?case=${caseName}`, `n-${caseName}`);
  expect(task.status.state).toBe("TASK_STATE_SUBMITTED");
  const waiting = await until(
    () => statusPushes(caseName, task.id).find((p) => p.body.statusUpdate.status?.state === "TASK_STATE_INPUT_REQUIRED"),
    60_000,
    "the input-required push",
  );
  const request = requestOf(waiting.body.statusUpdate.status);
  expect(request).toMatchObject({ requestKind: "approval", options: [{ id: "approve" }, { id: "reject" }] });
  expect(request.requestId).toMatch(/^[0-9a-f]{32}$/);
  // The model asked for the tool once and has seen no result: nothing ran before the approval.
  expect(askOf(`remember to ${note}`).requests.map((r) => r.results)).toEqual([[]]);
  return { caller, task, request };
}

/** The `hitl/request` data of a task status. */
const requestOf = (status) => status?.message?.parts?.find((p) => p.data?.type === HITL_REQUEST_TYPE)?.data;

/** The approval, as the gatekeeper relays it: the request's id and the option picked, nothing to push (the task keeps its config). */
const approve = (caller, taskId, requestId) =>
  caller.call("SendMessage", {
    message: { messageId: `answer-${requestId}`, role: "ROLE_USER", taskId, parts: [{ data: { type: HITL_RESPONSE_TYPE, requestId, optionId: "approve" } }] },
    configuration: { returnImmediately: true },
  });

/**
 * The terminal push of a task is COMPLETED and answers with the note saved;
 * the model's follow-up carried `save_note`'s result; the tool ran once (its
 * one result has one id however often it was shown); and a later turn of the
 * same caller lists the note exactly once.
 */
async function expectSavedOnce(caseName, caller, taskId, note, timeoutMs) {
  const done = await until(() => taskPushes(caseName, taskId)[0], timeoutMs, "the terminal push");
  expect(done.body.task.status.state).toBe("TASK_STATE_COMPLETED");
  // Well formed (A2A JSON, a Bearer token) and carrying the task's own notification token, across the restart too.
  expect(pushHeaderProblems(done.headers, `n-${caseName}`, new Set())).toEqual([]);
  const results = askOf(`remember to ${note}`).requests.flatMap((r) => r.results);
  expect(results.length).toBeGreaterThan(0);
  const saved = results.map((r) => JSON.parse(r));
  for (const result of saved) expect(result).toMatchObject({ saved: note });
  expect(new Set(saved.map((r) => r.id)).size, `save_note ran more than once: ${results.join(" ")}`).toBe(1);
  expect(JSON.stringify(done.body.task.artifacts)).toContain(`noted:`);
  expect(JSON.stringify(done.body.task.artifacts)).toContain(note);

  const listing = await caller.sendMessage(LIST_ASK, `${gatekeeper.pushUrl}?case=${caseName}`, `n-${caseName}`);
  const listed = await until(() => taskPushes(caseName, listing.task.id)[0], 60_000, "the listing's terminal push");
  expect(listed.body.task.status.state).toBe("TASK_STATE_COMPLETED");
  const notes = askOf(LIST_ASK)
    .requests.flatMap((r) => r.results)
    .at(-1);
  expect(JSON.parse(notes ?? "{}")).toEqual({ notes: [note] });
  // Emptied for the next case's listing.
  asks.delete(LIST_ASK);
}

it("keeps a request for approval across a SIGKILL of the Worker, takes the answer after, and saves once", { timeout: 180_000 }, async () => {
  const { caller, task, request } = await parkedNote("parked", "buy milk");

  await crashAndRestart();
  // The restarted Worker's object still waits on the same request.
  const after = await caller.call("GetTask", { id: task.id });
  expect(after.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  expect(requestOf(after.status)?.requestId).toBe(request.requestId);

  const answered = Date.now();
  const accepted = await approve(caller, task.id, request.requestId);
  expect(accepted.task.status.state).toBe("TASK_STATE_WORKING");
  await expectSavedOnce("parked", caller, task.id, "buy milk", 60_000);
  say(`parked across the kill: completed ${((Date.now() - answered) / 1000).toFixed(1)} s after the answer`);
  expect.soft(host.reloads(), "wrangler reloaded the Worker mid-run (a source file changed: run on a quiet tree)").toBe(0);
});

it("finishes a turn whose answer was accepted just before a SIGKILL of the Worker, with its tool run once", {
  timeout: RECOVERY_TIMEOUT_MS + 60_000,
}, async () => {
  const { caller, task, request } = await parkedNote("answered", "buy eggs");
  // The model's follow-up (the tool's result) is not answered in this process: the kill comes while
  // the resumed round waits on it, after the tool ran and before the turn could finish.
  holding = { asked: "remember to buy eggs", epoch };
  const accepted = await approve(caller, task.id, request.requestId);
  expect(accepted.task.status.state).toBe("TASK_STATE_WORKING");
  await until(() => askOf("remember to buy eggs").requests.find((r) => r.held), 60_000, "the model's follow-up after the answer");
  const restarted = await crashAndRestart();
  holding = undefined;
  expect(taskPushes("answered", task.id), "the turn finished before the kill came").toEqual([]);

  await expectSavedOnce("answered", caller, task.id, "buy eggs", RECOVERY_TIMEOUT_MS);
  const recovered = taskPushes("answered", task.id)[0].at - restarted;
  const after = askOf("remember to buy eggs").requests.filter((r) => r.epoch === epoch).length;
  say(`answered, then killed in the resumed round: completed ${(recovered / 1000).toFixed(1)} s after the restart (${after} model request(s) after it)`);
  expect.soft(host.reloads(), "wrangler reloaded the Worker mid-run (a source file changed: run on a quiet tree)").toBe(0);
});
