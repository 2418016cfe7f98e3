import { performance } from "node:perf_hooks";
import { createLocalJWKSet, jwtVerify } from "jose";
import { A2A_JSON, NOTIFICATION_TOKEN_HEADER, jwksUrlOf } from "../../src/a2a/wire.ts";
import { getJson } from "./a2a.mjs";
import { runPool } from "./load.mjs";
import { sleep } from "./net.mjs";
import { percentile } from "./stats.mjs";

const PUSH_TIMEOUT_MS = 60_000;
/** After the last turn, how long late pushes and model calls (duplicates) are waited for before counting. */
const STRAGGLER_MS = 3_000;

/**
 * The segments of a turn. Most are differences of timestamps taken in this
 * process (`performance.now()`, loopback only, so one clock):
 *
 *   t0 SendMessage sent              t1 its reply (submitted) received
 *   t2 model request reached the     t3 the model's reply handed to the kernel
 *      fake model
 *   t4 the push's body received
 *
 * Two come from the Durable Object's clock instead, read off the tasks it
 * returns: `begun`, the submitted task's `status.timestamp` (beginTask), and
 * `saved`, the pushed task's (the run step's terminal write). That clock has
 * whole milliseconds and moves only with the object's I/O, so it can read a
 * few milliseconds early; it is mapped onto this process's clock through
 * `performance.timeOrigin`.
 */
const SEGMENTS = {
  accept: (t) => t.t1 - t.t0,
  acceptToPush: (t) => t.t4 - t.t1,
  sendToPush: (t) => t.t4 - t.t0,
  // accept → push = toModel + model + fromModel, exactly.
  toModel: (t) => t.t2 - t.t1,
  model: (t) => t.t3 - t.t2,
  fromModel: (t) => t.t4 - t.t3,
  // fromModel = toSave + saveToPush.
  toSave: (t) => t.saved - t.t3,
  saveToPush: (t) => t.t4 - t.saved,
  // SendMessage → push = toDo + doToModel + model + toSave + saveToPush.
  toDo: (t) => t.begun - t.t0,
  doToModel: (t) => t.t2 - t.begun,
  // Within accept: the reply is received this long after the model was called.
  modelToReply: (t) => t.t1 - t.t2,
};
/** Segments shown as a share of the median accept → push, and of the median SendMessage → push. */
const OF_ACCEPT_TO_PUSH = ["toModel", "model", "fromModel", "toSave", "saveToPush"];
const OF_SEND_TO_PUSH = ["toDo", "doToModel", "model", "toSave", "saveToPush"];

/**
 * Runs `count` turns through SendMessage, at most `concurrency` open at a
 * time (a turn is open from its SendMessage until its push arrives), and
 * times each: accept, accept → push, and where accept → push goes. Each turn
 * has its own messageId, its own push URL (`?turn=<tag>`) and notification
 * token, and a user text carrying its tag, which the fake model finds in the
 * model request and echoes in its answer. Every push is checked: a
 * `completed` task, the turn's own task id, token and answer, the headers of
 * a push; duplicates and missing pushes are counted, not hidden.
 *
 * Pushes and model calls that belong to no turn of this batch are counted as
 * `foreign` (turns of an earlier phase still running would disturb these).
 *
 * `callers`, instead of one `caller`: turn i is sent by `callers[i % n]`, so
 * that many identities (Durable Objects) share the load.
 * @param {{ caller?: any, callers?: any[], gatekeeper: any, workerOrigin: string, count: number, concurrency: number, deadline: number, label?: string }} options
 */
export async function measureTurns({ caller, callers = [caller], gatekeeper, workerOrigin, count, concurrency, deadline, label = "turns" }) {
  const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  /**
   * @typedef {{ tag: string, t0: number, t1: number, t2: number, t3: number, t4: number, begun: number, saved: number,
   *   taskId: string | null, modelCalls: number, pushes: number, problems: string[], pushed: (() => void) | null,
   *   pushId: string | undefined, progressPushes: number, modelRead: number, modelRequestBytes: number }} Turn
   * @type {Turn[]}
   */
  const turns = Array.from({ length: count }, (_, i) => ({
    tag: `${run}-${i}`,
    t0: NaN,
    t1: NaN,
    t2: NaN,
    t3: NaN,
    t4: NaN,
    begun: NaN,
    saved: NaN,
    taskId: null,
    modelCalls: 0,
    pushes: 0,
    problems: [],
    pushed: null,
    pushId: undefined,
    progressPushes: 0,
    modelRead: NaN,
    modelRequestBytes: NaN,
  }));
  const byTag = new Map(turns.map((t) => [t.tag, t]));
  const foreign = { model: 0, push: 0 };
  const bearerTokens = new Set();

  // Once the batch is summarized, model calls and pushes of its turns still count: as late ones.
  let summarized = false;
  const late = { modelCalls: 0, pushes: 0 };
  const stopObserving = gatekeeper.observe({
    onModel({ tag, t2, read, t3, bytes }) {
      const turn = tag && byTag.get(tag);
      if (!turn) return void (summarized || foreign.model++);
      if (summarized) return void late.modelCalls++;
      if (++turn.modelCalls === 1) Object.assign(turn, { t2, modelRead: read, t3, modelRequestBytes: bytes });
    },
    onPush({ url, headers, body, t4 }) {
      const turn = byTag.get(url.searchParams.get("turn") ?? "");
      if (!turn) return void (summarized || foreign.push++);
      if (summarized) return void late.pushes++;
      // A progress announcement (`statusUpdate`, between rounds) is not the turn's result.
      if (/^\s*\{\s*"statusUpdate"/.test(body)) return void turn.progressPushes++;
      if (++turn.pushes > 1) return; // a duplicate: counted, the first one is the turn's
      turn.t4 = t4;
      checkPush(turn, headers, body, bearerTokens);
      turn.pushed?.();
    },
  });

  const started = performance.now();
  let keepWatching = false;
  try {
    await runPool({
      count,
      concurrency,
      deadline,
      request: async (i) => {
        const turn = turns[i];
        const pushed = new Promise((resolve) => (turn.pushed = () => resolve(undefined)));
        turn.t0 = performance.now();
        const { task } = await callers[i % callers.length].sendMessage(
          `bench-turn ${turn.tag}: reply with anything`,
          `${gatekeeper.pushUrl}?turn=${turn.tag}`,
          tokenOf(turn),
        );
        turn.t1 = performance.now();
        turn.begun = fromWallClock(task.status?.timestamp);
        turn.taskId = task.id;
        if (task.status?.state !== "TASK_STATE_SUBMITTED") turn.problems.push(`accepted as ${task.status?.state}, not submitted`);
        if (turn.pushId !== undefined && turn.pushId !== task.id) turn.problems.push(`push named task ${turn.pushId}, not ${task.id}`);
        let timer;
        const waited = await Promise.race([
          pushed.then(() => "pushed"),
          new Promise((resolve) => (timer = setTimeout(resolve, Math.min(PUSH_TIMEOUT_MS, Math.max(0, deadline - Date.now())), "timeout"))),
        ]);
        clearTimeout(timer);
        if (waited === "timeout") turn.problems.push(`no push within ${PUSH_TIMEOUT_MS / 1000} s`);
      },
    });
    const elapsedMs = performance.now() - started;
    await sleep(STRAGGLER_MS);
    const summary = summarizeTurns({ label, turns, concurrency, elapsedMs, foreign });
    summary.checks.callbackTokens = await verifyCallbackTokens([...bearerTokens], { workerOrigin, pushUrl: gatekeeper.pushUrl });
    summarized = true;
    keepWatching = true;
    return {
      summary,
      /** Stops watching; returns the model calls and pushes of this batch's turns that came after it was summarized. */
      stop: () => (stopObserving(), { ...late }),
    };
  } finally {
    if (!keepWatching) stopObserving();
  }
}

/**
 * Verifies each distinct callback JWT the pushes carried against the Worker's
 * own JWKS: signed by it, `iss` its origin, `aud` the push URL without its
 * query. A handful at most: a token is reused while it has time left.
 */
export async function verifyCallbackTokens(tokens, { workerOrigin, pushUrl }) {
  const keys = createLocalJWKSet(JSON.parse(await getJson(jwksUrlOf(workerOrigin))));
  const failures = [];
  for (const token of tokens) {
    try {
      await jwtVerify(token, keys, { issuer: workerOrigin, audience: pushUrl, algorithms: ["EdDSA"] });
    } catch (error) {
      failures.push(`${error.code ?? error.name}: ${error.message}`);
    }
  }
  return { distinct: tokens.length, verified: tokens.length - failures.length, failures };
}

const tokenOf = (turn) => `n-${turn.tag}`;

/**
 * What is wrong with a push's headers: its media type, its Bearer JWT (collected into
 * `bearerTokens`, to be verified once each) and the push config's notification token.
 * @param {import("node:http").IncomingHttpHeaders} headers
 * @param {string} notificationToken
 * @param {Set<string>} bearerTokens
 */
export function pushHeaderProblems(headers, notificationToken, bearerTokens) {
  const problems = [];
  if (headers["content-type"] !== A2A_JSON) problems.push(`push Content-Type ${headers["content-type"]}`);
  const bearer = /^Bearer (\S+)$/.exec(headers.authorization ?? "")?.[1];
  if (bearer) bearerTokens.add(bearer);
  else problems.push("push without a Bearer token");
  if (headers[NOTIFICATION_TOKEN_HEADER] !== notificationToken) problems.push(`push carried notification token ${headers[NOTIFICATION_TOKEN_HEADER]}`);
  return problems;
}

function checkPush(turn, headers, text, bearerTokens) {
  const problem = (p) => turn.problems.push(p);
  turn.problems.push(...pushHeaderProblems(headers, tokenOf(turn), bearerTokens));
  let task;
  try {
    task = JSON.parse(text).task;
  } catch {
    return problem("push body is not JSON");
  }
  if (!task) return problem("push body has no task");
  if (task.status?.state !== "TASK_STATE_COMPLETED") problem(`pushed task is ${task.status?.state}, not completed`);
  if (turn.taskId !== null && task.id !== turn.taskId) problem(`push named task ${task.id}, not ${turn.taskId}`);
  turn.pushId = task.id; // checked against the accept reply if that is still on its way
  if (!JSON.stringify(task.artifacts ?? []).includes(`ok ${turn.tag}`)) problem("pushed task does not carry this turn's model answer");
  turn.saved = fromWallClock(task.status?.timestamp);
  if (!Number.isFinite(turn.saved)) problem("pushed task has no status.timestamp");
}

/**
 * An ISO timestamp of the Durable Object's clock as a `performance.now()` of
 * this process: through `performance.timeOrigin` (sub-millisecond, unlike
 * `Date.now()`), and + 0.5 ms because the Durable Object's clock truncates.
 */
function fromWallClock(iso) {
  return Date.parse(iso ?? "") + 0.5 - performance.timeOrigin;
}

/** p50/p99/mean of one segment over the turns that have it. */
function segmentStats(values) {
  const sorted = Float64Array.from(values).sort();
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
    sum,
  };
}

function summarizeTurns({ label, turns, concurrency, elapsedMs, foreign }) {
  const complete = turns.filter((t) => Number.isFinite(t.t1) && Number.isFinite(t.t2) && Number.isFinite(t.t4));
  const segments = Object.fromEntries(Object.entries(SEGMENTS).map(([name, of]) => [name, segmentStats(complete.map(of).filter(Number.isFinite))]));
  // Each segment against a whole: its median over the whole's median (`ofP50`: what the table
  // shows), and its part of all that whole's time in the run (`ofSum`: these add up to 100 %).
  const against = (names, whole) =>
    Object.fromEntries(names.map((n) => [n, { ofP50: segments[n].p50 / segments[whole].p50, ofSum: segments[n].sum / segments[whole].sum }]));
  const shares = { acceptToPush: against(OF_ACCEPT_TO_PUSH, "acceptToPush"), sendToPush: against(OF_SEND_TO_PUSH, "sendToPush") };
  const problems = turns.flatMap((t) => t.problems.map((p) => `${t.tag}: ${p}`));
  return {
    label,
    turns: turns.length,
    concurrency,
    elapsedMs,
    turnsPerS: turns.length / (elapsedMs / 1000),
    segments,
    shares,
    // Every turn's timestamps in ms after its t0, for a closer look than percentiles give.
    samples: turns.map((t) => ({
      ...Object.fromEntries(["t1", "t2", "t3", "t4", "begun", "saved"].map((k) => [k, Number.isFinite(t[k]) ? Math.round((t[k] - t.t0) * 100) / 100 : null])),
      modelRequestBytes: Number.isFinite(t.modelRequestBytes) ? t.modelRequestBytes : null,
    })),
    // The model request carries the caller's conversation so far, so it grows turn by turn.
    modelRequestBytes: segmentStats(turns.map((t) => t.modelRequestBytes).filter(Number.isFinite)),
    // Of (b): the request's body still arriving (workerd sends it), and the fake model's own time.
    modelBody: segmentStats(complete.map((t) => t.modelRead - t.t2).filter(Number.isFinite)),
    modelOwn: segmentStats(complete.map((t) => t.t3 - t.modelRead).filter(Number.isFinite)),
    checks: {
      pushed: turns.filter((t) => t.pushes > 0).length,
      missing: turns.filter((t) => t.pushes === 0).length,
      duplicatePushes: turns.reduce((n, t) => n + Math.max(0, t.pushes - 1), 0),
      progressPushes: turns.reduce((n, t) => n + t.progressPushes, 0),
      modelCallsPerTurn: countBy(turns.map((t) => t.modelCalls)),
      // The model called before the SendMessage reply was read: possible, as the Workflow is not awaited.
      modelBeforeReply: complete.filter((t) => t.t2 < t.t1).length,
      // The Durable Object's timestamps are whole milliseconds of another clock, one that reads the time of
      // the object's last I/O: one that falls outside the interval it must lie in (give or take 1 ms) says
      // by how much (e), (c1) read short and (f), (c2) long.
      clockSkew: complete.filter((t) => outside(t) > 1).length,
      clockSkewMaxMs: Math.max(0, ...complete.map(outside)),
      problems: problems.length,
      firstProblems: problems.slice(0, 10),
      foreign,
    },
  };
}

/** How far (ms) a turn's Durable Object timestamps fall outside the intervals they must lie in. */
function outside(t) {
  return Math.max(0, t.t0 - t.begun, t.begun - t.t1, t.t3 - t.saved, t.saved - t.t4) || 0;
}

function countBy(values) {
  const out = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
