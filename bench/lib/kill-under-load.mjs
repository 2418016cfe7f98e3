// Kill under load: many callers' turns against the reference Worker under
// `wrangler dev --local`, with the model failing now and then, pushes refused
// at first now and then, and the Worker's whole process group SIGKILLed
// part-way through the sends and started again on the same storage. It
// records everything the gatekeeper side sees and checks what the platform
// promises (docs/protocol.md "Events, streams and pushes"): every accepted
// turn ends in exactly one terminal state and is pushed in it, nothing runs
// twice, and a turn cut off by the crash is recovered. Shared by the e2e
// (test/node/e2e/kill-under-load.e2e.mjs, small) and `npm run bench:soak`
// (bench/soak.mjs, the issue's size), which only differ in the counts.
import { performance } from "node:perf_hooks";
import { TERMINAL_STATE_NAMES } from "../../src/a2a/wire.ts";
import { chatCompletionBody } from "../../src/testing/chat-completion.ts";
import { textOf } from "../../scripts/dev/standin-model.mjs";
import { freshSigningJwk } from "../../scripts/keys.mjs";
import { startGatekeeper } from "./gatekeeper.mjs";
import { createHost } from "./host.mjs";
import { sleep } from "./net.mjs";
import { percentile } from "./stats.mjs";
import { pushHeaderProblems, verifyCallbackTokens } from "./turns.mjs";

/** The two models of the run: OPENAI_MODEL and OPENAI_FALLBACK_MODEL, both this fake. */
const MODELS = { primary: "kul-primary", fallback: "kul-fallback" };
/**
 * Retries of a failed model request, per model: the assistant (reference/agents.ts)
 * sets none, so core's default (`model.retries` in src/agent/config.ts).
 */
export const MODEL_RETRIES = 2;
/** What the fake model makes of every turn: one tool call (step 1), then the answer (step 2). */
const STEPS = 2;
/**
 * Model requests one run of a turn's round may make: each of its steps tried
 * 1 + retries times, on the primary and then, from step 1 again, on the
 * fallback (generateWithFallback restarts the tool loop on the next model).
 */
export const REQUESTS_PER_RUN = (1 + MODEL_RETRIES) * STEPS * 2;

/**
 * How a turn's user text names it, and how its tool call does: the fake model asks for
 * `current_time` in the time zone `clock-<tag>`, the same every time it is asked for that turn,
 * and the tool's result quotes it (with the time it ran, so each run's result is its own).
 */
const TURN_TEXT = /kul-turn ([0-9a-z]+-\d+):/;
const MARKER = /clock-([0-9a-z]+-\d+)/;
const SUBMITTED = "TASK_STATE_SUBMITTED";
const say0 = (line) => process.stderr.write(`${line}\n`);

/** A small seeded PRNG (mulberry32): the same seed, the same sequence of coin flips. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * @typedef {{ at: number, epoch: number, model: string, step: number, status: number, results: string[] }} ModelRequest
 * @typedef {{ epoch: number, model: string, at: number, seen: number }} ToolResult  where and when a result was first seen, and how often
 * @typedef {{ at: number, status: number, taskId: string | undefined, state: string | undefined }} Push
 * @typedef {{ i: number, tag: string, caller: number, messageId: string, taskId: string | undefined, taskIds: Set<string>,
 *   sentAt: number, acceptedAt: number, sendAttempts: number, sendErrors: { kind: string, at: number, message: string }[],
 *   requests: ModelRequest[], results: Map<string, ToolResult>, strayRequests: ModelRequest[], answeredIn: Set<number>,
 *   pushes: Push[], terminalAt: number, terminal: string | undefined, answeredAs: string | undefined,
 *   firstTerminalAt: number, problems: string[], cut: boolean, finalState: string | undefined,
 *   pushed: Promise<void>, markPushed: () => void, settled: Promise<void>, release: () => void }} Turn
 */

/**
 * Prepares a run; `run()` does it and resolves to what it saw, `stop()`
 * stops whatever is still running (register it before calling `run`, so an
 * interrupt or a test timeout leaves no workerd behind).
 * @param {{ root: string, turns: number, callers: number, concurrency: number, modelFailureRate: number,
 *   pushFailureRate: number, killAt: number, seed?: number, stateDir?: string, logDir?: string,
 *   recoveryWaitMs?: number, deadlineMs?: number, say?: (line: string) => void }} options
 *   `killAt`: the share of the sends at which the Worker is killed; `recoveryWaitMs`: how long
 *   after the last send every turn's terminal push is waited for.
 */
export function killUnderLoad(options) {
  const { root, turns: count, callers: callerCount, concurrency, modelFailureRate, pushFailureRate, killAt } = options;
  const say = options.say ?? say0;
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const recoveryWaitMs = options.recoveryWaitMs ?? 300_000;
  const cleanups = [];
  let stopped = false;
  const stop = async () => {
    stopped = true;
    while (cleanups.length)
      await cleanups
        .pop()()
        .catch((error) => say(`cleanup: ${error.message}`));
  };
  return { seed, stop, run: () => run().finally(stop) };

  async function run() {
    const started = performance.now();
    const deadline = started + (options.deadlineMs ?? 3_600_000);
    const rng = prng(seed);
    const runId = Math.floor(Math.random() * 36 ** 4)
      .toString(36)
      .padStart(4, "0");
    /** @type {Turn[]} */
    const turns = Array.from({ length: count }, (_, i) => {
      /** @type {Turn} */
      const turn = /** @type {any} */ ({
        i,
        tag: `${runId}-${i}`,
        caller: i % callerCount,
        messageId: `kul-${runId}-${i}`,
        taskId: undefined,
        taskIds: new Set(),
        sentAt: NaN,
        acceptedAt: NaN,
        sendAttempts: 0,
        sendErrors: [],
        requests: [],
        results: new Map(),
        strayRequests: [],
        answeredIn: new Set(),
        pushes: [],
        terminalAt: NaN,
        terminal: undefined,
        answeredAs: undefined,
        firstTerminalAt: NaN,
        problems: [],
        cut: false,
        finalState: undefined,
      });
      turn.pushed = new Promise((resolve) => (turn.markPushed = () => resolve(undefined)));
      turn.settled = new Promise((resolve) => (turn.release = () => resolve(undefined)));
      void turn.pushed.then(turn.release);
      return turn;
    });
    const byTag = new Map(turns.map((t) => [t.tag, t]));
    const counts = {
      model: { requests: 0, failed: 0, byModel: { [MODELS.primary]: 0, [MODELS.fallback]: 0 }, other: 0, foreign: 0 },
      push: { posts: 0, firstDeliveries: 0, refusedFirst: 0, foreign: 0, duplicates: 0 },
    };
    const bearerTokens = new Set();
    const firstSeen = new Set();
    /** Which worker process a request came from: bumped when the second one is spawned, after the first is gone. */
    let epoch = 0;
    const timeline = { killedAt: NaN, restartedAt: NaN, lastSendAt: NaN, allPushedAt: NaN };

    const answerModel = (body) => {
      const at = performance.now();
      counts.model.requests++;
      /** @type {any} */
      const request = parseJson(body);
      if (!request) return { status: 400, body: JSON.stringify({ error: { message: "not JSON" } }) };
      const model = String(request.model);
      if (model in counts.model.byModel) counts.model.byModel[model]++;
      const reply = (answer, status = 200) => ({ status, body: JSON.stringify(chatCompletionBody(answer, model)) });
      // A request without the clock tool is not a turn's (a compaction's summary): answered, counted apart.
      if (!(request.tools ?? []).some((t) => t.function?.name === "current_time")) {
        counts.model.other++;
        return reply({ content: "summary" });
      }
      const messages = request.messages ?? [];
      const user = messages.findLast((m) => m.role === "user");
      const turn = byTag.get(TURN_TEXT.exec(textOf(user?.content))?.[1] ?? "");
      if (!turn) {
        counts.model.foreign++;
        return reply({ content: "ok" });
      }
      // The tool's results for this turn (its marker quoted), each the whole text the tool returned.
      const results = messages
        .filter((m) => m.role === "tool")
        .map((m) => textOf(m.content))
        .filter((text) => MARKER.exec(text)?.[1] === turn.tag);
      /** @type {ModelRequest} */
      const seen = { at, epoch, model, step: results.length ? 2 : 1, status: 200, results };
      // The model answers the newest user message. Once this turn has had its answer (in this process) or its
      // terminal push, a request whose newest message is still this turn's is not this turn's own: it is
      // another round reading the caller's conversation (a re-run, whose own message is no longer the newest),
      // or this turn running twice. Either way a stray, kept apart from the turn's own requests.
      const stray = Number.isFinite(turn.terminalAt) || turn.answeredIn.has(epoch);
      (stray ? turn.strayRequests : turn.requests).push(seen);
      if (!stray) {
        for (const result of results) {
          const known = turn.results.get(result);
          if (known) known.seen++;
          else turn.results.set(result, { epoch, model, at, seen: 1 });
        }
      }
      if (results.length > 1) turn.problems.push(`one model request carried ${results.length} tool results: ${results.join(" ")}`);
      if (rng() < modelFailureRate) {
        seen.status = 500;
        counts.model.failed++;
        return { status: 500, body: JSON.stringify({ error: { message: "injected failure", type: "server_error" } }) };
      }
      if (seen.step === 1) return reply({ toolCalls: [{ name: "current_time", arguments: { timeZone: `clock-${turn.tag}` } }] });
      if (!stray) turn.answeredIn.add(epoch);
      return reply({ content: `done ${turn.tag}` });
    };

    const answerPush = ({ url, headers, body }) => {
      const at = performance.now();
      counts.push.posts++;
      const task = parseJson(body)?.task;
      const state = task?.status?.state;
      const key = `${task?.id}\n${state}`;
      const first = !firstSeen.has(key);
      firstSeen.add(key);
      if (first) counts.push.firstDeliveries++;
      const status = first && rng() < pushFailureRate ? 503 : 200;
      if (status !== 200) counts.push.refusedFirst++;
      const turn = byTag.get(url.searchParams.get("turn") ?? "");
      if (!turn) {
        counts.push.foreign++;
        return status;
      }
      turn.pushes.push({ at, status, taskId: task?.id, state });
      if (!task) turn.problems.push(`a push that is not a {task}: ${body.slice(0, 120)}`);
      else if (!TERMINAL_STATE_NAMES.includes(state)) turn.problems.push(`a push in state ${state}, not a terminal one`);
      else if (!Number.isFinite(turn.firstTerminalAt)) turn.firstTerminalAt = at;
      if (status !== 200 || !TERMINAL_STATE_NAMES.includes(state)) return status;
      if (Number.isFinite(turn.terminalAt)) {
        counts.push.duplicates++;
        if (state !== turn.terminal) turn.problems.push(`pushed ${state} after it had been pushed ${turn.terminal}`);
        return status;
      }
      turn.terminalAt = at;
      turn.terminal = state;
      checkPush(turn, headers, task, bearerTokens);
      turn.markPushed();
      return status;
    };

    const gatekeeper = await startGatekeeper({ answerModel, answerPush });
    cleanups.push(gatekeeper.close);
    const signing = await freshSigningJwk();
    const host = await createHost({
      root,
      gatekeeper,
      stateDir: options.stateDir,
      expectedTurns: count,
      logDir: options.logDir,
      vars: {
        GATEKEEPER_ORIGINS: JSON.stringify([gatekeeper.origin]),
        OPENAI_BASE_URL: gatekeeper.modelBaseUrl,
        OPENAI_MODEL: MODELS.primary,
        OPENAI_FALLBACK_MODEL: MODELS.fallback,
      },
      secrets: { A2A_SIGNING_KEY: JSON.stringify(signing), OPENAI_API_KEY: "kill-under-load" },
    });
    cleanups.push(host.stop);
    const afterKill = Math.ceil(count * (1 - killAt)) + concurrency;
    if (afterKill > host.turnBudget) {
      throw new Error(
        `the restarted workerd would run about ${afterKill} turns, more than its open files allow (${host.turnBudget}, see bench/lib/host.mjs): raise the open-file limit (ulimit -n)`,
      );
    }
    say(`Gatekeeper and model on ${gatekeeper.origin}; starting wrangler dev (state in ${host.stateDir}, seed ${seed})`);
    await host.start();
    const callers = await Promise.all(Array.from({ length: callerCount }, (_, c) => host.callerFor(`kul-${runId}-caller-${c}`)));
    const pushUrl = (turn) => `${gatekeeper.pushUrl}?turn=${turn.tag}`;

    const killIndex = Math.min(count - 1, Math.floor(count * killAt));
    let killing = Promise.resolve();
    /** A restart that failed ends the run: nothing would answer the sends. */
    let restartFailure;
    let halt = () => {};
    const halted = new Promise((resolve) => (halt = () => resolve(undefined)));
    const killAndRestart = async () => {
      timeline.killedAt = performance.now();
      say(`Killing the Worker's process group at send ${killIndex + 1} of ${count}`);
      const port = await host.kill();
      epoch++;
      await host.start(port);
      timeline.restartedAt = performance.now();
      // Cut off by the crash: sent before it, with no terminal push yet. Their lanes take new turns.
      for (const turn of turns) {
        if (turn.sentAt < timeline.killedAt && !Number.isFinite(turn.terminalAt)) {
          turn.cut = true;
          turn.release();
        }
      }
      const cut = turns.filter((t) => t.cut).length;
      say(`Restarted on the same storage ${((timeline.restartedAt - timeline.killedAt) / 1000).toFixed(1)} s after the kill; ${cut} turn(s) were in flight`);
    };

    const send = async (turn) => {
      const caller = callers[turn.caller];
      for (let attempt = 1; !stopped; attempt++) {
        const at = performance.now();
        turn.sendAttempts = attempt;
        if (attempt === 1) turn.sentAt = at;
        if (turn.i === killIndex && attempt === 1) {
          killing = killAndRestart().catch((error) => {
            restartFailure = error;
            stopped = true;
            halt();
          });
        }
        try {
          const { task } = await caller.sendMessage(`kul-turn ${turn.tag}: what time is it?`, pushUrl(turn), `n-${turn.tag}`, turn.messageId);
          if (!Number.isFinite(turn.acceptedAt)) turn.acceptedAt = performance.now();
          turn.taskIds.add(task.id);
          turn.taskId ??= task.id;
          if (attempt === 1 && task.status?.state !== SUBMITTED) turn.problems.push(`accepted as ${task.status?.state}, not submitted`);
          return;
        } catch (error) {
          turn.sendErrors.push({ kind: classify(error), at, message: String(error.message).slice(0, 200) });
          if (performance.now() > deadline) return;
          await sleep(Math.min(2_000, 250 * 2 ** (attempt - 1)));
        }
      }
    };

    let next = 0;
    let sentCount = 0;
    const lane = async () => {
      while (next < count && !stopped && performance.now() < deadline) {
        const turn = turns[next++];
        await send(turn);
        if (++sentCount % Math.max(1, Math.round(count / 10)) === 0)
          say(`  ${sentCount} / ${count} sent (${((performance.now() - started) / 1000).toFixed(0)} s)`);
        // Open until its terminal push; a lost one holds its lane no longer than the recovery wait.
        if (turn.taskId && !turn.cut) await within(Promise.race([turn.settled, halted]), Math.min(recoveryWaitMs, deadline - performance.now()));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
    timeline.lastSendAt = performance.now();
    await killing;
    if (restartFailure) throw new Error(`the Worker did not come back after the kill: ${restartFailure.message}`);

    // Every turn's terminal push, the recovered ones' included.
    const waitUntil = Math.min(deadline, performance.now() + recoveryWaitMs);
    const progress = setInterval(() => {
      const cut = turns.filter((t) => t.cut);
      say(
        `  waiting: ${turns.filter((t) => Number.isFinite(t.terminalAt)).length} / ${count} pushed, ${cut.filter((t) => Number.isFinite(t.terminalAt)).length} / ${cut.length} cut off by the kill recovered`,
      );
    }, 10_000);
    try {
      await within(Promise.all(turns.map((t) => t.pushed)), waitUntil - performance.now());
    } finally {
      clearInterval(progress);
    }
    timeline.allPushedAt = performance.now();
    // A few quiet seconds for what a duplicate run would still send.
    let traffic = -1;
    while (traffic !== counts.model.requests + counts.push.posts && performance.now() < deadline) {
      traffic = counts.model.requests + counts.push.posts;
      await sleep(3_000);
    }

    // What the Worker itself says now: each task's state, and how many tasks each caller holds.
    const lookups = turns.filter((t) => t.taskId);
    await pool(lookups, 8, async (turn) => {
      const task = await callers[turn.caller].call("GetTask", { id: turn.taskId }).catch((error) => ({ error }));
      turn.finalState = task.error ? `GetTask failed: ${task.error.message}` : task.status?.state;
    });
    const held = await Promise.all(callers.map((caller) => caller.call("ListTasks", { pageSize: 1 }).then((page) => page.totalSize)));
    const callbackTokens = await verifyCallbackTokens([...bearerTokens], { workerOrigin: host.origin, pushUrl: gatekeeper.pushUrl });
    const reloads = host.reloads();
    const logFiles = [...host.logFiles];

    return summarize({ turns, counts, timeline, held, callerCount, callbackTokens, reloads, logFiles, seed, started, config: options });
  }
}

/** @returns {any} the JSON in `text`, or undefined */
function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Resolves when `promise` does or after `ms`, whichever is first, and leaves no timer behind. */
async function within(promise, ms) {
  let timer;
  try {
    await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Each item once, `width` at a time. */
async function pool(items, width, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

/** What kind of failure a SendMessage met: no connection, no answer in time, or an answer that was not a result. */
function classify(error) {
  if (error.name === "TimeoutError") return "timeout";
  if (error instanceof TypeError) return "connection";
  const status = /answered (\d+)/.exec(error.message)?.[1];
  return status ? `HTTP ${status}` : "other";
}

/** The checks a push of a turn's terminal state must pass: headers, token, task, answer. */
function checkPush(turn, headers, task, bearerTokens) {
  const problem = (p) => turn.problems.push(p);
  turn.problems.push(...pushHeaderProblems(headers, `n-${turn.tag}`, bearerTokens));
  const answer = /done ([0-9a-z]+-\d+)/.exec(JSON.stringify(task.artifacts ?? []))?.[1];
  turn.answeredAs = answer;
  if (task.status?.state === "TASK_STATE_COMPLETED" && answer !== turn.tag) {
    problem(answer ? `completed with the answer to turn ${answer}'s message, not its own` : "completed without this turn's answer");
  }
}

/** Nearest-rank p50, p99 and max of some milliseconds, and how many. */
function spread(values) {
  const sorted = Float64Array.from(values).sort();
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.length ? sorted[sorted.length - 1] : NaN };
}

/**
 * Per turn: model requests within the bound of one run per process, no fallback
 * without the primary exhausted, and each extra tool execution explained (a
 * re-run after the crash, or the fallback starting the tool loop over).
 */
function judgeTurn(turn) {
  const bound = [];
  const byEpoch = Map.groupBy(turn.requests, (r) => r.epoch);
  for (const [epoch, requests] of byEpoch) {
    if (requests.length > REQUESTS_PER_RUN) bound.push(`${requests.length} model requests in process ${epoch + 1} (at most ${REQUESTS_PER_RUN})`);
    for (const [slot, same] of Map.groupBy(requests, (r) => `${r.model} step ${r.step}`)) {
      if (same.length > 1 + MODEL_RETRIES) bound.push(`${same.length} requests to ${slot} in process ${epoch + 1} (at most ${1 + MODEL_RETRIES})`);
    }
    const firstFallback = requests.find((r) => r.model === MODELS.fallback);
    if (firstFallback && !exhausted(requests, firstFallback.at))
      bound.push(`the fallback was asked in process ${epoch + 1} before the primary failed ${1 + MODEL_RETRIES} times in a row`);
  }
  // Each distinct result the model saw for this turn is one run of the tool (a retried request repeats the same one).
  const executed = [...turn.results.values()];
  /** Why each run after the first happened: the round cut off by the kill ran again, the fallback started over, or nothing known. */
  const reruns = /** @type {("restart" | "fallback" | "unexplained")[]} */ ([]);
  for (let k = 1; k < executed.length; k++) {
    const before = executed[k - 1];
    const now = executed[k];
    if (now.epoch > before.epoch) reruns.push("restart");
    else if (
      now.model === MODELS.fallback &&
      exhausted(
        turn.requests.filter((r) => r.epoch === now.epoch && r.step === 2),
        now.at,
      )
    )
      reruns.push("fallback");
    else reruns.push("unexplained");
  }
  return { bound, executions: executed.length, reruns };
}

/** How many of each value. */
function tallyOf(values) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** What a turn cut off by the kill had done before it, as the gatekeeper side saw it. */
function stageAtKill(turn, killedAt) {
  const before = turn.requests.filter((r) => r.at < killedAt);
  const answered = before.some((r) => r.step === 2 && r.status === 200);
  const refused = turn.pushes.some((p) => p.at < killedAt && p.status !== 200);
  if (!Number.isFinite(turn.acceptedAt) || turn.acceptedAt > killedAt)
    return turn.sendAttempts > 1 ? "its send cut off (retried)" : "accepted as the kill came";
  if (answered) return refused ? "answered, its first push refused (the retry died with the process)" : "answered, not yet pushed";
  return before.length ? "in its round (model or tool)" : "accepted, model not yet asked";
}

/** Whether the primary had failed 1 + retries requests in a row before `at` (the fallback's cue). */
function exhausted(requests, at) {
  let run = 0;
  for (const r of requests) {
    if (r.at >= at) break;
    if (r.model !== MODELS.primary) continue;
    run = r.status === 200 ? 0 : run + 1;
    if (run >= 1 + MODEL_RETRIES) return true;
  }
  return false;
}

function summarize({ turns, counts, timeline, held, callerCount, callbackTokens, reloads, logFiles, seed, started, config }) {
  const listed = (pred, say) => turns.filter(pred).map((t) => `${t.tag}: ${say(t)}`);
  const judged = new Map(turns.map((t) => [t, judgeTurn(t)]));
  const states = {};
  for (const t of turns) states[t.finalState ?? "no task"] = (states[t.finalState ?? "no task"] ?? 0) + 1;
  const perCaller = Array.from({ length: callerCount }, (_, c) => turns.filter((t) => t.caller === c).length);
  const cut = turns.filter((t) => t.cut);
  const sinceRestart = (t) => t.terminalAt - timeline.restartedAt;
  const sendErrors = {};
  for (const t of turns) for (const e of t.sendErrors) sendErrors[e.kind] = (sendErrors[e.kind] ?? 0) + 1;
  // A refusal while the Worker was up (not between the kill and the restart) is the platform's, not the crash's.
  const refusedWhileUp = turns.flatMap((t) =>
    t.sendErrors
      .filter((e) => e.kind !== "connection" && !(e.at >= timeline.killedAt && e.at <= timeline.restartedAt))
      .map((e) => `${t.tag}: ${e.kind} ${e.message}`),
  );
  const executions = {};
  const reruns = { restart: 0, fallback: 0, unexplained: 0 };
  for (const j of judged.values()) {
    executions[j.executions] = (executions[j.executions] ?? 0) + 1;
    for (const why of j.reruns) reruns[why]++;
  }
  const requestsPerTurn = {};
  for (const t of turns) requestsPerTurn[t.requests.length] = (requestsPerTurn[t.requests.length] ?? 0) + 1;
  const failed = turns.filter((t) => t.finalState === "TASK_STATE_FAILED").length;
  const terminal = turns.filter((t) => Number.isFinite(t.terminalAt));
  return {
    config: { ...config, seed, requestsPerRun: REQUESTS_PER_RUN, modelRetries: MODEL_RETRIES, models: MODELS },
    durationS: (performance.now() - started) / 1000,
    timeline: {
      killedAtSend: Math.min(config.turns - 1, Math.floor(config.turns * config.killAt)) + 1,
      restartTookMs: timeline.restartedAt - timeline.killedAt,
      sendingS: (timeline.lastSendAt - started) / 1000,
      lastTerminalAfterRestartMs: Math.max(...terminal.map(sinceRestart)),
    },
    turns: {
      total: turns.length,
      states,
      failedShare: failed / turns.length,
      pushedOnce: terminal.length,
      duplicatePushes: counts.push.duplicates,
      cutByKill: cut.length,
      cutRecovered: cut.filter((t) => Number.isFinite(t.terminalAt)).length,
      // Its round ran again after the restart: its own model requests there, or an answer to another turn's message.
      cutRanModelAgain: cut.filter((t) => t.requests.some((r) => r.epoch > 0) || (t.answeredAs !== undefined && t.answeredAs !== t.tag)).length,
      retriedSends: turns.filter((t) => t.sendAttempts > 1).length,
      sendErrors,
    },
    // Over the turns cut off by the kill: from the restart (the new process serving) to their terminal push.
    recoveryMs: spread(cut.filter((t) => Number.isFinite(t.terminalAt)).map(sinceRestart)),
    // The same from the kill: the recovery policy's window runs from a turn's last report, just before it.
    recoveryFromKillMs: spread(cut.filter((t) => Number.isFinite(t.terminalAt)).map((t) => t.terminalAt - timeline.killedAt)),
    // Where each of them was when the process died.
    cutStages: tallyOf(cut.map((t) => stageAtKill(t, timeline.killedAt))),
    model: {
      ...counts.model,
      strays: turns.reduce((n, t) => n + t.strayRequests.length, 0),
      requestsPerTurn,
      toolExecutionsPerTurn: executions,
      toolReruns: reruns,
    },
    push: { ...counts.push },
    checks: {
      missingTerminal: listed(
        (t) => !Number.isFinite(t.terminalAt),
        (t) => `no terminal push (${t.pushes.length} push(es) seen, task ${t.taskId ?? "never accepted"})`,
      ),
      oneTaskPerMessage: listed(
        (t) => t.taskIds.size !== 1 || t.pushes.some((p) => p.taskId !== t.taskId),
        (t) => `replies named ${[...t.taskIds].join(", ") || "no task"}; pushes named ${[...new Set(t.pushes.map((p) => p.taskId))].join(", ")}`,
      ),
      oneTerminalState: listed(
        (t) => new Set(t.pushes.map((p) => p.state)).size > 1 || (t.terminal !== undefined && t.finalState !== t.terminal),
        (t) => `pushed ${[...new Set(t.pushes.map((p) => p.state))].join(" then ")}, GetTask says ${t.finalState}`,
      ),
      tasksPerCaller: held.flatMap((n, c) => (n === perCaller[c] ? [] : [`caller ${c} holds ${n} tasks for ${perCaller[c]} turns`])),
      modelBound: [...judged].flatMap(([t, j]) => j.bound.map((b) => `${t.tag}: ${b}`)),
      // A tool effect repeated, with why: `restart` (its round, cut off by the kill before its outcome was
      // recorded, ran again), `fallback` (the primary gave up after the tool ran, and the fallback started the
      // tool loop over), `unexplained` (run again in the same process with neither: a round running twice).
      toolRanAgain: [...judged].flatMap(([t, j]) => (j.reruns.length ? [`${t.tag}: its tool ran ${j.executions} times (${j.reruns.join(", ")})`] : [])),
      strayModelRequests: listed(
        (t) => t.strayRequests.length > 0,
        (t) =>
          `${t.strayRequests.length} model request(s) answering its message after it had been answered (${t.strayRequests.map((r) => `p${r.epoch + 1} step ${r.step}`).join(", ")})`,
      ),
      pushProblems: turns.flatMap((t) => t.problems.map((p) => `${t.tag}: ${p}`)),
      refusedWhileUp,
      callbackTokens,
      reloads,
    },
    logFiles,
    // Per turn, for a closer look (bench/results/soak-<time>.json).
    samples: turns.map((t) => ({
      tag: t.tag,
      cut: t.cut,
      state: t.finalState,
      sendAttempts: t.sendAttempts,
      sentAt: round(t.sentAt - started),
      firstTerminalAttemptAt: round(t.firstTerminalAt - started),
      terminalAt: round(t.terminalAt - started),
      modelRequests: t.requests.map(describeRequest(started)),
      strayModelRequests: t.strayRequests.map(describeRequest(started)),
      pushes: t.pushes.map((p) => `${round(p.at - started)} ${p.state} ${p.status}`),
    })),
    timelineMs: {
      killedAt: round(timeline.killedAt - started),
      restartedAt: round(timeline.restartedAt - started),
      lastSendAt: round(timeline.lastSendAt - started),
      allPushedAt: round(timeline.allPushedAt - started),
    },
  };
}

const round = (v) => (Number.isFinite(v) ? Math.round(v) : null);
/** @param {number} started */
const describeRequest = (started) => (/** @type {ModelRequest} */ r) =>
  `${round(r.at - started)} p${r.epoch + 1} ${r.model === MODELS.primary ? "primary" : "fallback"} step ${r.step} ${r.status}`;
