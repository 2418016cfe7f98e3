// Kill under load: 200 turns from 10 callers, 16 open at a time, against
// `wrangler dev --local`, with a fake gatekeeper (JWKS, push receiver) and a
// fake OpenAI-compatible model on loopback. About 10 % of model requests
// answer HTTP 500 and about 20 % of first deliveries of a push answer 503.
// At 40 % of the sends the Worker's whole process group is SIGKILLed and
// started again on the same storage; sends that fail meanwhile are retried
// with their messageId. The scenario (bench/lib/kill-under-load.mjs) is the
// one `npm run bench:soak` runs at 2,000 turns; here it is checked, with no
// assertion on how long anything took.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { killUnderLoad, MODEL_RETRIES, REQUESTS_PER_RUN } from "../../../bench/lib/kill-under-load.mjs";

const ROOT = new URL("../../..", import.meta.url).pathname;
const home = mkdtempSync(join(tmpdir(), "kill-under-load-"));
const scenario = killUnderLoad({
  root: ROOT,
  turns: 200,
  callers: 10,
  concurrency: 16,
  modelFailureRate: 0.1,
  pushFailureRate: 0.2,
  killAt: 0.4,
  logDir: home,
  // The recovery window is about 90 s past a turn's last report (DEFAULT_RECOVERY_POLICY) plus a 30 s pass.
  recoveryWaitMs: 200_000,
  deadlineMs: 290_000,
  say: (line) => process.stderr.write(`[kill-under-load] ${line}\n`),
});
afterAll(async () => {
  await scenario.stop();
  rmSync(home, { recursive: true, force: true });
});

it("finishes every turn exactly once across a SIGKILL of the Worker under load", { timeout: 330_000 }, async () => {
  const run = await scenario.run();
  const { checks } = run;
  process.stderr.write(
    `[kill-under-load] seed ${run.config.seed}: ${run.turns.cutByKill} turn(s) in flight at the kill, the last task finished ` +
      `${(run.timeline.lastTerminalAfterRestartMs / 1000).toFixed(1)} s after the restart (recovery p50 ${(run.recoveryMs.p50 / 1000).toFixed(1)} s, ` +
      `max ${(run.recoveryMs.max / 1000).toFixed(1)} s); states ${JSON.stringify(run.turns.states)}; ${run.model.requests} model requests, ` +
      `${run.model.failed} failed; ${run.push.refusedFirst} of ${run.push.firstDeliveries} first deliveries refused; ` +
      `${run.turns.retriedSends} send(s) retried; tool runs again: ${JSON.stringify(run.model.toolReruns)}; ` +
      `whole run ${run.durationS.toFixed(0)} s\n`,
  );

  // The scenario happened as designed: the faults were injected and the kill cut turns off.
  // The checks are soft: one run reports every one that failed.
  expect.soft(checks.reloads, "wrangler reloaded the Worker mid-run (a source file changed: run on a quiet tree)").toBe(0);
  expect(run.model.failed).toBeGreaterThan(0);
  expect(run.push.refusedFirst).toBeGreaterThan(0);
  expect(run.turns.cutByKill).toBeGreaterThan(0);

  // Every accepted turn reaches one terminal state, and its push arrives in it.
  expect.soft(checks.refusedWhileUp).toEqual([]);
  expect.soft(checks.missingTerminal).toEqual([]);
  expect.soft(run.turns.pushedOnce).toBe(200);
  // One task per messageId (a retried send names the task it started), and each caller holds only those.
  expect.soft(checks.oneTaskPerMessage).toEqual([]);
  expect.soft(checks.tasksPerCaller).toEqual([]);
  // Each task id is pushed in exactly one terminal state (repeats of that push are at least once),
  // and GetTask at the end says the same: a terminal task never changed state.
  expect.soft(checks.oneTerminalState).toEqual([]);
  // Every push is well formed and carries the turn's own token and the answer to its own message.
  expect.soft(checks.pushProblems).toEqual([]);
  // The model is never asked a turn's message again once that turn had its answer (a re-run of
  // another turn reading the caller's conversation, or a turn running twice, would).
  expect.soft(checks.strayModelRequests).toEqual([]);
  expect.soft(checks.callbackTokens.failures).toEqual([]);
  // Model requests per turn and process: at most 1 + MODEL_RETRIES (the assistant's config: 2) per
  // model and step, so at most REQUESTS_PER_RUN (3 × 2 steps × 2 models) for one run of its round.
  expect.soft(checks.modelBound, `more than ${1 + MODEL_RETRIES} per model and step, or ${REQUESTS_PER_RUN} per run`).toEqual([]);
  // No tool effect repeated: the model sees one result of the turn's one tool call, however often
  // its request is retried. Each entry says why it ran again (see bench/lib/kill-under-load.mjs).
  expect.soft(checks.toolRanAgain).toEqual([]);
});
