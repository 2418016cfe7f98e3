import { readFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { runPool } from "./load.mjs";
import { percentile } from "./stats.mjs";

const PUSH_TIMEOUT_MS = 60_000;

/**
 * The conversation workloads (issue 13): many turns in one conversation, and
 * as many over `conversations` conversations of one caller, to see whether a
 * turn costs the same at the end of a long conversation as at its start. The
 * model request carries a bounded window (`history.windowMessages`) plus a
 * summary, and compaction folds older turns (`history.compactAfterTokens`),
 * so it should.
 *
 * Each workload is its own caller (a fresh identity key: an empty Durable
 * Object). Turn i goes to conversation i mod `conversations` (round-robin),
 * each conversation an A2A `contextId` of the bench's own, sent with every
 * turn. A turn is `SendMessage` with `returnImmediately` and a push config,
 * open from its send until its push arrives, `concurrency` open at a time.
 *
 * The turns run in blocks of `window / blocks` (each block fills the pool
 * and drains it), grouped by `window` (a thousand) into slices. In the first
 * slice and in the last, baseline blocks alternate with the conversation's
 * (A B, B A, …): turns of the same caller that each open a fresh context, so
 * they carry no history, measured against the same process at the same
 * time. Their rate says how much of a change between the first and the last
 * slice is the machine or the caller's growing store rather than the
 * conversation's length. Both measured slices start on a fresh workerd
 * (lib/host.mjs), the first because the workload starts there and the last
 * because the bench restarts before it, so they compare like with like; the
 * slices between restart whenever the process has no room left.
 *
 * The fake model (lib/gatekeeper.mjs) answers each turn `ok <tag>` and tells
 * a compaction's summary request from a turn's; every summary request seen
 * while a workload runs is one of its compactions.
 * @param {{ host: Awaited<ReturnType<typeof import("./host.mjs").createHost>>, gatekeeper: Awaited<ReturnType<typeof import("./gatekeeper.mjs").startGatekeeper>>,
 *   settle: (maxMs: number) => Promise<void>, config: ConversationConfig, deadline: number, say: (line: string) => void }} options
 */
export async function measureConversations({ host, gatekeeper, settle, config, deadline, say }) {
  const window = config.window;
  if (config.turns < 2 * window) throw new Error(`BENCH_CONV_TURNS (${config.turns}) must be at least twice BENCH_CONV_WINDOW (${window})`);
  if (config.turns % window !== 0) throw new Error(`BENCH_CONV_TURNS (${config.turns}) must be a multiple of BENCH_CONV_WINDOW (${window})`);
  if (window % config.blocks !== 0) throw new Error(`BENCH_CONV_WINDOW (${window}) must be a multiple of BENCH_CONV_BLOCKS (${config.blocks})`);
  if (config.baseline % config.blocks !== 0)
    throw new Error(`BENCH_CONV_BASELINE (${config.baseline}) must be a multiple of BENCH_CONV_BLOCKS (${config.blocks})`);
  if (window + config.baseline > host.turnBudget) {
    throw new Error(`a measured slice (${window} + ${config.baseline} turns) does not fit in one workerd (${host.turnBudget}, see lib/host.mjs)`);
  }
  const workloads = {};
  for (const [name, conversations, label] of [
    ["one", 1, "one conversation"],
    ["many", config.conversations, `${config.conversations} conversations`],
  ]) {
    workloads[name] = await runWorkload({ host, gatekeeper, settle, config, deadline, say, name, conversations, label });
  }
  // What the Worker said about its compactions, read off wrangler's logs (when the host keeps them).
  const failures = await compactionFailures(host.logFiles);
  for (const workload of Object.values(workloads)) {
    const mine = failures.filter((f) => f.conversation.startsWith(workload.contextPrefix));
    workload.compactions.failedInLog = host.logFiles.length ? mine.length : null;
    workload.compactions.failureReasons = countBy(mine.map((f) => f.reason));
  }
  return workloads;
}

/** The Worker's "compaction of conversation … failed" lines, with the conversation and the error's first line. */
async function compactionFailures(files) {
  const out = [];
  for (const file of files) {
    const text = await readFile(file, "utf8").catch(() => "");
    for (const raw of text.split("\n")) {
      const line = raw.replace(/\x1b\[[0-9;]*m/g, "");
      const match = /compaction of conversation (\S+) failed.*?((?:[A-Z]\w*)?Error\b.*)?$/.exec(line);
      if (match) out.push({ conversation: match[1], reason: (match[2] ?? "(no error text)").trim().slice(0, 200) });
    }
  }
  return out;
}

/**
 * @typedef {{ turns: number, conversations: number, concurrency: number, window: number, blocks: number, baseline: number, textBytes: number }} ConversationConfig
 * @typedef {{ tag: string, contextId: string, t0: number, t1: number, t4: number, modelCalls: number, messages: number, bytes: number,
 *   carries: number | undefined, pushes: number, problems: string[], pushed: (() => void) | null }} Turn
 */

async function runWorkload({ host, gatekeeper, settle, config, deadline, say, name, conversations, label }) {
  const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  const key = `bench-conv-${name}-${run}`;
  const contextPrefix = `bench-conv-${run}-`;
  const window = config.window;
  const blockSize = window / config.blocks;
  const baselineBlock = config.baseline / config.blocks;
  const sliceCount = Math.ceil(config.turns / window);
  const slices = Array.from({ length: sliceCount }, () => ({
    elapsedMs: 0,
    turns: /** @type {Turn[]} */ ([]),
    // Each summary request seen in this slice: its size, and whether its transcript starts from an earlier summary.
    compactions: /** @type {{ bytes: number, onSummary: boolean }[]} */ ([]),
  }));
  const oversizedBefore = gatekeeper.counts.oversized;
  const baseline = { first: { elapsedMs: 0, turns: /** @type {Turn[]} */ ([]) }, last: { elapsedMs: 0, turns: /** @type {Turn[]} */ ([]) } };
  /** @type {Map<string, Turn>} */
  const byTag = new Map();
  const foreign = { model: 0, push: 0 };
  const restarts = { count: 0, ms: 0 };
  let current = 0; // the slice running now: where a compaction is counted
  let nextTurn = 0;
  let nextBaseline = 0;
  let finished = false;

  const stopObserving = gatekeeper.observe({
    onModel({ tag, bytes, messages, summary, carries }) {
      if (finished) return;
      if (summary) return void slices[current]?.compactions.push({ bytes, onSummary: carries !== undefined });
      const turn = tag && byTag.get(tag);
      if (!turn) return void foreign.model++;
      if (++turn.modelCalls === 1) Object.assign(turn, { messages, bytes, carries });
    },
    onPush({ url, body, t4 }) {
      const turn = byTag.get(url.searchParams.get("turn") ?? "");
      if (!turn || finished) return void (finished || foreign.push++);
      if (++turn.pushes > 1) return;
      turn.t4 = t4;
      checkPush(turn, body);
      turn.pushed?.();
    },
  });

  let caller = await host.callerFor(key);
  const restart = async (why) => {
    const started = Date.now();
    say(`  ${label}: ${why}: letting the turns settle, then a fresh workerd on the same storage`);
    await settle(300_000);
    await host.restart();
    caller = await host.callerFor(key);
    restarts.count++;
    restarts.ms += Date.now() - started;
  };

  /** One turn: its send, its reply, its push. */
  const runTurn = async (/** @type {Turn} */ turn) => {
    const pushed = new Promise((resolve) => (turn.pushed = () => resolve(undefined)));
    turn.t0 = performance.now();
    const { task } = await caller.sendMessage(
      textOf(turn.tag, config.textBytes),
      `${gatekeeper.pushUrl}?turn=${turn.tag}`,
      `n-${turn.tag}`,
      undefined,
      turn.contextId,
    );
    turn.t1 = performance.now();
    if (task.status?.state !== "TASK_STATE_SUBMITTED") turn.problems.push(`accepted as ${task.status?.state}, not submitted`);
    if (task.contextId !== turn.contextId) turn.problems.push(`accepted in context ${task.contextId}, not ${turn.contextId}`);
    let timer;
    const waited = await Promise.race([
      pushed.then(() => "pushed"),
      new Promise((resolve) => (timer = setTimeout(resolve, Math.min(PUSH_TIMEOUT_MS, Math.max(0, deadline - Date.now())), "timeout"))),
    ]);
    clearTimeout(timer);
    if (waited === "timeout") turn.problems.push(`no push within ${PUSH_TIMEOUT_MS / 1000} s`);
  };

  /** Runs `turns` with `config.concurrency` open at a time; returns the block's wall time. */
  const runBlock = async (/** @type {Turn[]} */ turns) => {
    for (const turn of turns) byTag.set(turn.tag, turn);
    const { elapsedMs } = await runPool({ count: turns.length, concurrency: config.concurrency, deadline, request: (i) => runTurn(turns[i]) });
    return elapsedMs;
  };
  const conversationTurns = (count) =>
    Array.from({ length: count }, () => {
      const i = nextTurn++;
      return newTurn(`${run}-${i}`, `${contextPrefix}${i % conversations}`);
    });
  // A fresh context each, of the same caller: a turn with no history.
  const baselineTurns = (count) =>
    Array.from({ length: count }, () => {
      const j = nextBaseline++;
      return newTurn(`${run}b-${j}`, `bench-fresh-${run}-${j}`);
    });

  const started = Date.now();
  for (let s = 0; s < sliceCount; s++) {
    current = s;
    const slice = slices[s];
    const size = Math.min(window, config.turns - s * window);
    const measured = s === 0 ? baseline.first : s === sliceCount - 1 ? baseline.last : null;
    if (measured) {
      // The last slice starts on a fresh process, as the first did (unless it is the first the bench starts).
      if (s > 0 || host.turnRoom() < host.turnBudget) await restart(s === 0 ? "before the first slice" : "before the last slice");
      for (let b = 0; b < config.blocks; b++) {
        const conversation = async () => {
          const turns = conversationTurns(blockSize);
          slice.elapsedMs += await runBlock(turns);
          slice.turns.push(...turns);
        };
        const fresh = async () => {
          const turns = baselineTurns(baselineBlock);
          measured.elapsedMs += await runBlock(turns);
          measured.turns.push(...turns);
        };
        if (b % 2 === 0) {
          await conversation();
          if (baselineBlock > 0) await fresh();
        } else {
          if (baselineBlock > 0) await fresh();
          await conversation();
        }
      }
    } else {
      for (let done = 0; done < size; done += blockSize) {
        const count = Math.min(blockSize, size - done);
        if (host.turnRoom() < count) await restart(`after ${nextTurn.toLocaleString("en-US")} turns`);
        const turns = conversationTurns(count);
        slice.elapsedMs += await runBlock(turns);
        slice.turns.push(...turns);
      }
    }
    const rate = slice.turns.length / (slice.elapsedMs / 1000);
    const compactions = slices.reduce((n, x) => n + x.compactions.length, 0);
    say(
      `  ${label}: ${nextTurn.toLocaleString("en-US")} / ${config.turns.toLocaleString("en-US")} turns, ${rate.toFixed(1)} turns/s in this slice, ${compactions} compaction(s) so far`,
    );
  }
  const sendingMs = slices.reduce((n, x) => n + x.elapsedMs, 0) + baseline.first.elapsedMs + baseline.last.elapsedMs;
  // Compactions the last turns set off still count as this workload's.
  await settle(60_000);
  finished = true;
  stopObserving();
  return summarizeWorkload({
    name,
    contextPrefix,
    oversized: gatekeeper.counts.oversized - oversizedBefore,
    label,
    conversations,
    config,
    slices,
    baseline,
    foreign,
    restarts,
    sendingMs,
    wallMs: Date.now() - started,
  });
}

/** @returns {Turn} */
const newTurn = (tag, contextId) => ({
  tag,
  contextId,
  t0: NaN,
  t1: NaN,
  t4: NaN,
  modelCalls: 0,
  messages: NaN,
  bytes: NaN,
  carries: undefined,
  pushes: 0,
  problems: [],
  pushed: null,
});

/** The user's text of a turn: its tag (which the fake model answers), padded to `bytes` if that is longer. */
function textOf(tag, bytes) {
  const text = `bench-turn ${tag}: reply with anything`;
  if (bytes <= text.length) return text;
  return `${text} ${"lorem ipsum dolor sit amet ".repeat(Math.ceil(bytes / 27))}`.slice(0, bytes);
}

function checkPush(turn, body) {
  let task;
  try {
    task = JSON.parse(body).task;
  } catch {
    return void turn.problems.push("push body is not JSON");
  }
  if (!task) return void turn.problems.push("push body has no task");
  if (task.status?.state !== "TASK_STATE_COMPLETED") turn.problems.push(`pushed task is ${task.status?.state}, not completed`);
  if (task.contextId !== turn.contextId) turn.problems.push(`pushed task is in context ${task.contextId}, not ${turn.contextId}`);
  if (!JSON.stringify(task.artifacts ?? []).includes(`ok ${turn.tag}`)) turn.problems.push("pushed task does not carry this turn's model answer");
}

/** min / p50 / p99 / max of some values. */
function spread(values) {
  const sorted = Float64Array.from(values.filter(Number.isFinite)).sort();
  return { count: sorted.length, min: sorted[0] ?? NaN, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN };
}

/** What the report shows of a group of turns run over `elapsedMs` of block time. */
function groupSummary(turns, elapsedMs) {
  const complete = turns.filter((t) => Number.isFinite(t.t4));
  return {
    turns: turns.length,
    elapsedMs,
    turnsPerS: turns.length / (elapsedMs / 1000),
    sendToPush: spread(complete.map((t) => t.t4 - t.t0)),
    accept: spread(turns.map((t) => t.t1 - t.t0)),
    // Of each turn's model request: its messages (the system prompt included) and its bytes.
    messages: spread(turns.map((t) => t.messages)),
    bytes: spread(turns.map((t) => t.bytes)),
    // Turns whose model request carried a summary: their conversation had been compacted.
    withSummary: turns.filter((t) => t.carries !== undefined).length,
  };
}

function summarizeWorkload({ name, contextPrefix, oversized, label, conversations, config, slices, baseline, foreign, restarts, sendingMs, wallMs }) {
  const all = [...slices.flatMap((s) => s.turns), ...baseline.first.turns, ...baseline.last.turns];
  const problems = all.flatMap((t) => t.problems.map((p) => `${t.tag}: ${p}`));
  const perSlice = slices.map((s) => ({ ...groupSummary(s.turns, s.elapsedMs), compactions: s.compactions.length }));
  const conversationTurns = slices.flatMap((s) => s.turns);
  const requests = slices.flatMap((s) => s.compactions);
  const first = perSlice[0];
  const last = perSlice[perSlice.length - 1];
  const base = { first: groupSummary(baseline.first.turns, baseline.first.elapsedMs), last: groupSummary(baseline.last.turns, baseline.last.elapsedMs) };
  const rateRatio = last.turnsPerS / first.turnsPerS;
  const baselineRatio = base.last.turnsPerS / base.first.turnsPerS;
  return {
    name,
    label,
    contextPrefix,
    conversations,
    turns: config.turns,
    concurrency: config.concurrency,
    window: config.window,
    blocks: config.blocks,
    baselinePerSlice: config.baseline,
    textBytes: config.textBytes,
    slices: perSlice,
    first,
    last,
    baseline: base,
    ratio: {
      // last ÷ first slice: the target is ≥ 0.8.
      turnsPerS: rateRatio,
      // The same for the fresh-context turns measured alongside: the machine and the caller's store, not the conversation.
      baselineTurnsPerS: baselineRatio,
      // The conversation's own change, with the baseline's taken out.
      turnsPerSOverBaseline: rateRatio / baselineRatio,
      // Against the fresh-context turns of the same slice: what a turn's history costs there.
      firstOverBaseline: first.turnsPerS / base.first.turnsPerS,
      lastOverBaseline: last.turnsPerS / base.last.turnsPerS,
      sendToPushP50: last.sendToPush.p50 / first.sendToPush.p50,
      messagesP50: last.messages.p50 / first.messages.p50,
    },
    compactions: {
      // Summary requests the fake model answered: compactions begun.
      total: requests.length,
      perSlice: slices.map((s) => s.compactions.length),
      bytes: spread(requests.map((c) => c.bytes)),
      // Summary requests whose transcript starts from an earlier summary: one had folded before.
      onSummary: requests.filter((c) => c.onSummary).length,
      // Distinct summaries turns' requests carried: compactions that folded, as far as the model can tell.
      folded: new Set(conversationTurns.map((t) => t.carries).filter((c) => c !== undefined)).size,
      // Model requests the fake model dropped for a body over its limit (1 MiB): summary requests, turns' are far smaller.
      oversized,
      // Filled in from wrangler's logs by measureConversations.
      failedInLog: /** @type {number | null} */ (null),
      failureReasons: /** @type {Record<string, number>} */ ({}),
    },
    checks: {
      pushed: all.filter((t) => t.pushes > 0).length,
      missing: all.filter((t) => t.pushes === 0).length,
      duplicatePushes: all.reduce((n, t) => n + Math.max(0, t.pushes - 1), 0),
      modelCallsPerTurn: countBy(all.map((t) => t.modelCalls)),
      problems: problems.length,
      firstProblems: problems.slice(0, 10),
      foreign,
    },
    restarts,
    sendingMs,
    wallMs,
  };
}

function countBy(values) {
  const out = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
