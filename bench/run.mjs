#!/usr/bin/env node
// `npm run bench`: measures the zero-trust edge against a real local workerd.
// See bench/README.md for what each figure means.
import { mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair } from "jose";
import { CARD_PATH } from "../src/a2a/wire.ts";
import { getJson } from "./lib/a2a.mjs";
import { measureConversations } from "./lib/conversations.mjs";
import { renderConversations } from "./lib/conversation-report.mjs";
import { startGatekeeper } from "./lib/gatekeeper.mjs";
import { createHost } from "./lib/host.mjs";
import { compare, runPool } from "./lib/load.mjs";
import { floorTurnsNeeded, measureFloor } from "./lib/floor.mjs";
import { longRunFloorTurnsNeeded, longRunTurnsNeeded, measureLongRun } from "./lib/long-run.mjs";
import { busyWarnings, describeMachine } from "./lib/machine.mjs";
import { saveProfile, startProfile } from "./lib/profile.mjs";
import { sleep } from "./lib/net.mjs";
import { renderFloorText, renderMedians, renderText } from "./lib/report.mjs";
import { RESULTS_DIR, writeResult } from "./lib/results.mjs";
import { ratio } from "./lib/stats.mjs";
import { measureTurns } from "./lib/turns.mjs";
import { judgeMedians, smokeViolations } from "./lib/verdicts.mjs";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH_DIR);

function readConfig(env, { smoke = false } = {}) {
  const num = (name, fallback, min = 1) => {
    const value = env[name] === undefined || env[name] === "" ? fallback : Number(env[name]);
    if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(env[name])}`);
    return value;
  };
  return {
    n: num("BENCH_N", 2000),
    concurrency: num("BENCH_CONCURRENCY", 8),
    seqN: num("BENCH_SEQ_N", 1000),
    warmup: num("BENCH_WARMUP", 200, 0),
    rounds: num("BENCH_ROUNDS", 4),
    listN: num("BENCH_LIST_N", 500),
    smallTasks: num("BENCH_SMALL_TASKS", 100),
    // A caller holding 10,000 tasks (issues 13 and 19): each seeded task opens a context of its own.
    largeTasks: num("BENCH_LARGE_TASKS", 10_000),
    // Every seeding turn lands in one caller's conversation; more in flight only queues on its Durable Object,
    // and past the compaction threshold, concurrent turns each set off their own compaction (see README).
    seedConcurrency: num("BENCH_SEED_CONCURRENCY", 4),
    turns: num("BENCH_TURNS", 200),
    turnConcurrency: num("BENCH_TURN_CONCURRENCY", 4),
    turnsSequential: num("BENCH_TURNS_SEQUENTIAL", 200, 0),
    turnWarmup: num("BENCH_TURN_WARMUP", 10, 0),
    pageSize: 50,
    deadlineS: num("BENCH_DEADLINE_S", 7200),
    // Unset: derived from the open-file limit (see lib/host.mjs). Set: a restart after that many turns per process.
    turnsPerWorker: env.BENCH_TURNS_PER_WORKER ? num("BENCH_TURNS_PER_WORKER", 0, 100) : undefined,
    stateDir: env.BENCH_STATE_DIR || undefined,
    // The conversation workloads (lib/conversations.mjs): one conversation, then `conversations` of one caller.
    conversation: {
      turns: num("BENCH_CONV_TURNS", 10_000),
      conversations: num("BENCH_CONV_CONVERSATIONS", 100),
      concurrency: num("BENCH_CONV_CONCURRENCY", 8),
      window: num("BENCH_CONV_WINDOW", 1_000),
      blocks: num("BENCH_CONV_BLOCKS", 4),
      baseline: num("BENCH_CONV_BASELINE", 200, 0),
      textBytes: num("BENCH_CONV_TEXT_BYTES", 0, 0),
    },
    // The floor comparison (lib/floor.mjs): the project against bench/floor/worker.ts; `--smoke` makes it small.
    floor: {
      callers: num("BENCH_FLOOR_CALLERS", 16),
      turns: num("BENCH_FLOOR_TURNS", smoke ? 64 : 480),
      sequential: num("BENCH_FLOOR_SEQUENTIAL", smoke ? 16 : 120),
      n: num("BENCH_FLOOR_N", smoke ? 200 : 1000),
      concurrency: num("BENCH_CONCURRENCY", 8),
      warmup: num("BENCH_FLOOR_WARMUP", smoke ? 20 : 100, 0),
      rounds: num("BENCH_ROUNDS", smoke ? 2 : 4),
    },
    // The long run (lib/long-run.mjs): the caller holding `largeTasks` against a fresh caller, same workerd.
    long: {
      sequential: num("BENCH_LONG_SEQUENTIAL", 120),
      turns: num("BENCH_LONG_TURNS", 200),
      concurrency: num("BENCH_TURN_CONCURRENCY", 4),
      n: num("BENCH_LONG_N", 1000),
      getTaskConcurrency: num("BENCH_CONCURRENCY", 8),
      warmup: num("BENCH_TURN_WARMUP", 10, 0),
      edgeWarmup: num("BENCH_FLOOR_WARMUP", 100, 0),
      rounds: num("BENCH_ROUNDS", 4),
    },
  };
}

/**
 * What to run, from the command line: everything by default (the edge, the
 * turns, the floor comparison, ListTasks, then the conversation workloads);
 * `--only conversations`, the conversation workloads alone; `--without
 * conversations`, the rest alone (the conversations take longer than all of
 * it, see the README); `--only floor`, the floor comparison alone, `--runs N`
 * times back to back with the headline's medians (bench/README.md "Results");
 * `--without floor`, everything else; `--smoke`, a small floor comparison
 * judged by wide margins (CI runs it: a violation fails it).
 */
function readParts(argv) {
  const parts = { main: true, conversations: true, floor: true, smoke: false, runs: 1 };
  const PARTS = ["conversations", "floor"];
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split("=", 2);
    if (flag === "--smoke") {
      Object.assign(parts, { main: false, conversations: false, floor: true, smoke: true });
      continue;
    }
    if (flag === "--runs") {
      const value = inline ?? argv[++i];
      parts.runs = Number(value);
      if (!Number.isInteger(parts.runs) || parts.runs < 1) throw new Error(`--runs takes a whole number of runs, at least 1, got ${JSON.stringify(value)}`);
      continue;
    }
    if (flag !== "--only" && flag !== "--without")
      throw new Error(`unknown argument ${JSON.stringify(argv[i])}: use --only or --without with ${PARTS.join(" or ")}, --runs with --only floor, or --smoke`);
    const what = inline ?? argv[++i];
    if (!PARTS.includes(what)) throw new Error(`${flag} takes ${PARTS.map((p) => JSON.stringify(p)).join(" or ")}, got ${JSON.stringify(what)}`);
    if (flag === "--only") {
      parts.main = false;
      for (const p of PARTS) parts[p] = p === what;
    } else parts[what] = false;
  }
  if (parts.runs > 1 && (parts.main || parts.conversations || !parts.floor || parts.smoke))
    throw new Error("--runs repeats the floor comparison alone: use it with --only floor");
  return parts;
}

const say = (line) => process.stderr.write(`${line}\n`);
let interrupted = false;

async function signingKeyJson() {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  return JSON.stringify({ ...(await exportJWK(privateKey)), kid: `bench-${Date.now()}` });
}

/**
 * Seeds one caller's Durable Object with `count` tasks (each SendMessage also
 * runs a turn), printing progress for the long ones. When the current workerd
 * has no room for more turns, waits for every turn to push and restarts it
 * (see lib/host.mjs). Returns the time spent sending, without the restarts,
 * and the time spent on them.
 */
async function seed(host, gatekeeper, key, count, { concurrency, deadline, label }) {
  let done = 0;
  let nextReport = 0.1;
  let sendingMs = 0;
  let restartMs = 0;
  let restarts = 0;
  // At each tenth: tasks so far and the time spent sending them, to show how a turn's cost grows with the caller's history.
  const marks = [];
  const seedStarted = Date.now();
  while (done < count) {
    if (host.turnRoom() <= 0) {
      const started = Date.now();
      say(`  ${label}: letting ${host.turnBudget.toLocaleString("en-US")} turns settle, then a fresh workerd on the same storage`);
      await settleTurns(host, gatekeeper, 300_000, deadline);
      await host.restart();
      restartMs += Date.now() - started;
      restarts++;
    }
    const caller = await host.callerFor(key);
    const offset = done;
    const { elapsedMs } = await runPool({
      count: Math.min(count - done, host.turnRoom()),
      concurrency,
      deadline,
      request: async (i) => {
        await caller.sendMessage(`bench task ${offset + i}`, gatekeeper.pushUrl);
        done++;
        if (count >= 1000 && done / count >= nextReport - 1e-9) {
          const mark = { tasks: done, sendingMs: Date.now() - seedStarted - restartMs };
          marks.push(mark);
          say(`  ${label}: ${done.toLocaleString("en-US")} / ${count.toLocaleString("en-US")} tasks (${(mark.sendingMs / 1000).toFixed(0)} s)`);
          nextReport += 0.1;
        }
      },
    });
    sendingMs += elapsedMs;
  }
  return { sendingMs, restartMs, restarts, marks };
}

/**
 * Waits until every SendMessage of the run has been pushed and then the
 * gatekeeper has seen no model call or push for two seconds (the turn's last
 * step, closing its record, follows the push): turns still running would
 * compete with what is measured next, and a restart would cut them off.
 * Bounded; whatever still runs is counted by `measuring`.
 */
async function settleTurns(host, gatekeeper, maxMs, deadline) {
  const until = Math.min(Date.now() + maxMs, deadline);
  while (Date.now() < until && gatekeeper.counts.notifications < host.stats.sendMessages) await sleep(250);
  let last = gatekeeper.turnTraffic();
  while (Date.now() < until) {
    await sleep(2_000);
    if (gatekeeper.turnTraffic() === last) return;
    last = gatekeeper.turnTraffic();
  }
}

/** Runs one measurement and adds the turn traffic the gatekeeper saw meanwhile to `tally`, for the report. */
async function measuring(gatekeeper, tally, measure) {
  const before = gatekeeper.turnTraffic();
  try {
    return await measure();
  } finally {
    tally.turnTrafficWhileMeasuring += gatekeeper.turnTraffic() - before;
  }
}

/** A reload means a cold isolate and maybe different code: figures from either side of it do not compare. */
function assertNoReload(host) {
  if (host.reloads() > 0) throw new Error("wrangler reloaded the Worker mid-run because a source file changed; run the bench again on a quiet tree");
}

async function measureEdge({ host, caller, gatekeeper, tally, config, deadline }) {
  const { task } = await caller.sendMessage("the task GetTask reads", gatekeeper.pushUrl);
  await settleTurns(host, gatekeeper, 30_000, deadline);
  const cardUrl = `${host.origin}${CARD_PATH}`;
  const kinds = [
    { name: "card", request: () => getJson(cardUrl) },
    { name: "verified", request: caller.prepared("GetExtendedAgentCard", {}) },
    { name: "getTask", request: caller.prepared("GetTask", { id: task.id }) },
  ];
  say(`Edge: warm-up (${config.warmup} per kind)`);
  for (const kind of kinds) {
    await runPool({ count: config.warmup, concurrency: config.concurrency, request: kind.request, deadline });
  }
  say(`Edge: ${config.n} per kind at concurrency ${config.concurrency}`);
  const concurrent = await measuring(gatekeeper, tally, () =>
    compare({ kinds, count: config.n, concurrency: config.concurrency, rounds: config.rounds, deadline }),
  );
  say(`Edge: ${config.seqN} per kind one at a time`);
  // Only here: under load the floor's server would share the client's own event loop and measure that instead.
  const floor = { name: "floor", request: () => getJson(gatekeeper.pingUrl) };
  const sequential = await measuring(gatekeeper, tally, () =>
    compare({ kinds: [floor, ...kinds], count: config.seqN, concurrency: 1, rounds: config.rounds, deadline }),
  );
  return {
    concurrent,
    sequential,
    // Each verified kind against the unauthenticated card: GetExtendedAgentCard is the verification alone,
    // GetTask is verification plus a Durable Object read.
    ratios: {
      concurrent: Object.fromEntries(["verified", "getTask"].map((k) => [k, againstCard(concurrent, k, true)])),
      sequential: Object.fromEntries(["verified", "getTask"].map((k) => [k, againstCard(sequential, k, false)])),
    },
  };
}

function againstCard(summaries, kind, withRate) {
  const s = summaries[kind];
  const card = summaries.card;
  return {
    ...(withRate ? { throughput: ratio(s.rps, card.rps) } : {}),
    p50: ratio(s.p50, card.p50),
    p99: ratio(s.p99, card.p99),
  };
}

/**
 * Turns end to end with a zero-latency model: one caller (one Durable
 * Object), a few warm-up turns, then one at a time and `turnConcurrency` open
 * at a time. Each batch keeps watching its turns until `stop`, so a push or
 * model call that comes after its figures were taken is still reported.
 */
async function measureTurnLatency({ host, gatekeeper, tally, config, deadline }) {
  const needed = config.turnWarmup + config.turnsSequential + config.turns;
  if (needed > host.turnBudget) throw new Error(`${needed} turns do not fit in one workerd (${host.turnBudget}, see lib/host.mjs): lower BENCH_TURNS`);
  if (needed > host.turnRoom()) {
    await settleTurns(host, gatekeeper, 300_000, deadline);
    await host.restart();
  }
  const caller = await host.callerFor(`bench-turns-${Date.now().toString(36)}`);
  const common = { caller, gatekeeper, workerOrigin: host.origin, deadline };
  await settleTurns(host, gatekeeper, 30_000, deadline);
  if (config.turnWarmup > 0) {
    say(`Turns: warm-up (${config.turnWarmup} one at a time)`);
    (await measureTurns({ ...common, count: config.turnWarmup, concurrency: 1, label: "warm-up" })).stop();
  }
  const plan = [...(config.turnsSequential > 0 ? [["sequential", config.turnsSequential, 1]] : []), ["concurrent", config.turns, config.turnConcurrency]];
  const batches = {};
  const watchers = [];
  for (const [label, count, concurrency] of plan) {
    say(`Turns: ${count} turns, ${concurrency} open at a time`);
    const { summary, stop } = await measureTurns({ ...common, count, concurrency, label });
    // Turn traffic that is not this batch's own competes with it, as with any timed request.
    tally.turnTrafficWhileMeasuring += summary.checks.foreign.model + summary.checks.foreign.push;
    batches[label] = summary;
    watchers.push(() => (summary.checks.late = stop()));
  }
  return {
    batches,
    stopWatching: () => {
      for (const watch of watchers) watch();
    },
  };
}

async function measureList({ host, gatekeeper, tally, config, deadline, floorSide }) {
  // Fresh identity keys per run: each is its own, empty Durable Object.
  const run = Date.now().toString(36);
  const keys = { small: `bench-small-${run}`, large: `bench-large-${run}` };
  const seedOptions = { concurrency: config.seedConcurrency, deadline };

  say(`ListTasks: seeding ${config.smallTasks} + ${config.largeTasks} tasks (SendMessage, concurrency ${config.seedConcurrency})`);
  const seededAt = Date.now();
  await seed(host, gatekeeper, keys.small, config.smallTasks, { ...seedOptions, label: "small caller" });
  const seeded = await seed(host, gatekeeper, keys.large, config.largeTasks, { ...seedOptions, label: "large caller" });
  // Every SendMessage started a turn: wait until the last of them has pushed before timing anything.
  const settleStarted = Date.now();
  await settleTurns(host, gatekeeper, 300_000, deadline);
  const settleMs = Date.now() - settleStarted;
  const seedWallMs = Date.now() - seededAt;
  // The callers of the process that is running now (a restart changes the origin, hence the token).
  const small = await host.callerFor(keys.small);
  const large = await host.callerFor(keys.large);

  const listSmall = small.prepared("ListTasks", { pageSize: config.pageSize });
  const listLarge = large.prepared("ListTasks", { pageSize: config.pageSize });
  const largePage = await listLarge();
  const totals = { small: (await listSmall()).totalSize, large: largePage.totalSize };
  if (totals.small !== config.smallTasks || totals.large !== config.largeTasks) {
    throw new Error(`ListTasks totalSize is ${totals.small} / ${totals.large}, expected ${config.smallTasks} / ${config.largeTasks}`);
  }

  say(`ListTasks: ${config.listN} calls per caller, one at a time`);
  const warm = Math.min(20, config.listN);
  await runPool({ count: warm, concurrency: 1, request: listSmall, deadline });
  await runPool({ count: warm, concurrency: 1, request: listLarge, deadline });
  const measured = await measuring(gatekeeper, tally, () =>
    compare({
      kinds: [
        { name: "small", request: listSmall },
        { name: "large", request: listLarge },
      ],
      count: config.listN,
      concurrency: 1,
      rounds: config.rounds,
      deadline,
    }),
  );
  // The turn figures again, for the caller that now holds `largeTasks` (issue 19, "flat in the long run").
  const longRun = await measureLongRun({
    host,
    gatekeeper,
    large: { key: keys.large, taskId: largePage.tasks.at(-1).id, tasks: totals.large },
    config: config.long,
    deadline,
    floor: floorSide,
    settle: (sideHost, sideGatekeeper, maxMs) => settleTurns(sideHost, sideGatekeeper, maxMs, deadline),
    say,
  });
  return {
    longRun,
    list: {
      small: { ...measured.small, totalSize: totals.small },
      large: { ...measured.large, totalSize: totals.large },
      ratio: { p50: ratio(measured.large.p50, measured.small.p50), p99: ratio(measured.large.p99, measured.small.p99) },
    },
    seeding: {
      tasks: config.largeTasks,
      elapsedMs: seeded.sendingMs,
      rps: config.largeTasks / (seeded.sendingMs / 1000),
      restarts: seeded.restarts,
      marks: seeded.marks,
      restartMs: seeded.restartMs,
      settleMs,
      wallMs: seedWallMs,
    },
  };
}

/** The edge, the turns, the floor comparison (with `floorSides`) and ListTasks: everything but the conversations. */
async function measureMain({ host, gatekeeper, config, deadline, floorSides }) {
  const edgeCaller = await host.callerFor(`bench-edge-${Date.now().toString(36)}`);
  const tally = { turnTrafficWhileMeasuring: 0 };
  const edge = await measureEdge({ host, caller: edgeCaller, gatekeeper, tally, config, deadline });
  assertNoReload(host);
  const turnPhase = await measureTurnLatency({ host, gatekeeper, tally, config, deadline });
  assertNoReload(host);
  const floor = floorSides ? await runFloor(floorSides, config, deadline) : undefined;
  const { list, seeding, longRun } = await measureList({ host, gatekeeper, tally, config, deadline, floorSide: floorSides?.floor });
  assertNoReload(host);
  if (floorSides) for (const side of [floorSides.floor, floorSides.contract]) assertNoReload(side.host);
  turnPhase.stopWatching();
  return { edge, turns: turnPhase.batches, floor, list, seeding, longRun, tally };
}

/** The floor comparison (lib/floor.mjs), neither side's Worker reloaded meanwhile. */
async function runFloor(sides, config, deadline) {
  const settle = (host, gatekeeper, maxMs) => settleTurns(host, gatekeeper, maxMs, deadline);
  // BENCH_PROFILE=floor (or =contract) profiles that floor worker's batch instead of the project's.
  const wanted = process.env.BENCH_PROFILE ?? "";
  const side = wanted === "floor" || wanted === "contract" ? wanted : "project";
  const profile = process.env.BENCH_PROFILE
    ? {
        side,
        start: (host) => startProfile(host.worker.inspectorPort),
        done: async (taken) => {
          await mkdir(RESULTS_DIR, { recursive: true });
          for (const line of await saveProfile(taken, join(RESULTS_DIR, `${side}-turns.cpuprofile`))) say(line);
        },
      }
    : undefined;
  const floor = await measureFloor({ sides, config: config.floor, deadline, settle, say, profile });
  for (const side of Object.values(sides)) assertNoReload(side.host);
  return floor;
}

/**
 * A floor worker's host (not started) with a gatekeeper of its own; both are stopped by `cleanups`.
 * `wrangler.jsonc`: the floor; `wrangler.contract.jsonc`: the contract floor.
 */
async function startFloor(config, wranglerConfig) {
  const gatekeeper = await startGatekeeper();
  cleanups.push(gatekeeper.close);
  const host = await createHost({
    root: ROOT,
    config: join(BENCH_DIR, "floor", wranglerConfig),
    gatekeeper,
    stateDir: config.stateDir,
    turnsPerWorker: config.turnsPerWorker,
    // The long run's floor caller takes its at-rest share too (the floor's, not the contract floor's).
    expectedTurns: floorTurnsNeeded(config.floor) + longRunFloorTurnsNeeded(config.long),
    vars: { GATEKEEPER_ORIGINS: JSON.stringify([gatekeeper.origin]), OPENAI_BASE_URL: gatekeeper.modelBaseUrl, OPENAI_MODEL: "bench" },
    secrets: { A2A_SIGNING_KEY: await signingKeyJson(), OPENAI_API_KEY: "bench" },
  });
  cleanups.push(host.stop);
  return { host, gatekeeper };
}

async function freshDir(dir) {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  return dir;
}

/** What is running now, stopped last first by `cleanup`: at the end of each run, on a signal, or at the deadline. */
const cleanups = [];
async function cleanup() {
  while (cleanups.length)
    await cleanups
      .pop()()
      .catch((error) => say(`cleanup: ${error.message}`));
}

/**
 * Starts the gatekeeper and the Worker, and for the floor comparison both
 * floor workers; runs `body` with them; stops them all, also when it fails.
 */
async function withWorkers(parts, config, body) {
  const conversationTurns = parts.conversations ? 2 * (config.conversation.turns + 2 * config.conversation.baseline) : 0;
  let host;
  try {
    const gatekeeper = await startGatekeeper();
    cleanups.push(gatekeeper.close);
    say(`Gatekeeper on ${gatekeeper.origin}; starting wrangler dev…`);
    host = await createHost({
      root: ROOT,
      gatekeeper,
      stateDir: config.stateDir,
      turnsPerWorker: config.turnsPerWorker,
      // The conversations' compaction failures are read off wrangler's logs (bench/results/logs/, one per process).
      logDir: parts.conversations ? await freshDir(join(RESULTS_DIR, "logs")) : undefined,
      expectedTurns:
        (parts.main
          ? 1 + config.turnWarmup + config.turnsSequential + config.turns + config.smallTasks + config.largeTasks + longRunTurnsNeeded(config.long)
          : 0) +
        (parts.floor ? floorTurnsNeeded(config.floor) : 0) +
        conversationTurns,
      // Each caller's token lives as long as the edge allows and is renewed before it ends (lib/gatekeeper.mjs).
      vars: {
        GATEKEEPER_ORIGINS: JSON.stringify([gatekeeper.origin]),
        // Every turn's model is the gatekeeper's stub: no network, no cost, no waiting.
        OPENAI_BASE_URL: gatekeeper.modelBaseUrl,
        OPENAI_MODEL: "bench",
      },
      // Through a private env file, never the command line.
      secrets: { A2A_SIGNING_KEY: await signingKeyJson(), OPENAI_API_KEY: "bench" },
    });
    cleanups.push(host.stop);
    // The floor workers (bench/floor/): a gatekeeper of its own each (the same fake model), so each side's counts are its own.
    const floorSides = parts.floor
      ? {
          project: { host, gatekeeper },
          floor: await startFloor(config, "wrangler.jsonc"),
          contract: await startFloor(config, "wrangler.contract.jsonc"),
        }
      : undefined;
    await Promise.all([host.start(), floorSides?.floor.host.start(), floorSides?.contract.host.start()]);
    say(`Worker on ${host.origin} (state in ${host.stateDir}; a fresh workerd every ${host.turnBudget.toLocaleString("en-US")} turns)`);
    if (floorSides) say(`Floor worker on ${floorSides.floor.host.origin}, contract floor on ${floorSides.contract.host.origin}`);
    // Its start made one verified call already: a wrong `aud`, `jku` or GATEKEEPER_ORIGINS would have stopped the run there.
    return await body({ host, gatekeeper, floorSides });
  } catch (error) {
    // The Worker's own account of a failure is in wrangler's output, not in the reply.
    if (host && !interrupted) {
      await sleep(1_000); // workerd's log of the failure trails the reply
      say(`Last lines from wrangler dev:\n${host.logTail()}`);
      if (host.reloads() > 0) say("wrangler reloaded the Worker during the run (a source file changed): that is the likely cause.");
    }
    throw error;
  } finally {
    await cleanup();
  }
}

/** Everything but the floor alone: the edge, the turns, the floor comparison, ListTasks and the conversations, as `parts` says. */
async function fullRun(parts, config, deadline, startedAt) {
  const { results, conversations } = await withWorkers(parts, config, async ({ host, gatekeeper, floorSides }) => {
    const main = parts.main ? await measureMain({ host, gatekeeper, config, deadline, floorSides }) : undefined;
    let conversations;
    if (parts.conversations) {
      const c = config.conversation;
      say(`Conversations: ${c.turns.toLocaleString("en-US")} turns in one conversation, then over ${c.conversations}, ${c.concurrency} open at a time`);
      const conversationsStarted = Date.now();
      const workloads = await measureConversations({
        host,
        gatekeeper,
        settle: (maxMs) => settleTurns(host, gatekeeper, maxMs, deadline),
        config: c,
        deadline,
        say,
      });
      assertNoReload(host);
      conversations = {
        date: new Date().toISOString(),
        machine: describeMachine(ROOT),
        config: c,
        turnsPerProcess: host.turnBudget,
        stateDir: host.stateDir,
        workloads,
        durationS: (Date.now() - conversationsStarted) / 1000,
        benchDurationS: (Date.now() - startedAt) / 1000,
        withMain: parts.main,
      };
    }
    const results = main && {
      date: new Date().toISOString(),
      machine: describeMachine(ROOT),
      config,
      edge: main.edge,
      turns: main.turns,
      floor: main.floor,
      list: main.list,
      seeding: main.seeding,
      longRun: main.longRun,
      conversations,
      gatekeeper: { ...gatekeeper.counts, ...main.tally, sendMessages: host.stats.sendMessages, jwksFetchedAt: gatekeeper.jwksFetchedAt },
      worker: {
        reloads: host.reloads(),
        processes: host.stats.workers,
        turnsPerProcess: host.turnBudget,
        stateDir: host.stateDir,
        storageMiB: host.storageMiB(),
      },
      durationS: (Date.now() - startedAt) / 1000,
    };
    return { results, conversations };
  });
  if (results) process.stdout.write(`\n${renderText(results)}\n`);
  if (conversations) process.stdout.write(`\n${renderConversations(conversations)}\n`);
  // A full run's file holds its conversations too.
  say(`Wrote ${await writeResult(results ? "run" : "conversations", results ?? conversations)}`);
}

/**
 * The floor comparison alone, `parts.runs` times back to back, each on fresh
 * workers as a run of its own: each run's tables and raw figures, then, for
 * more than one, each headline figure's values, median and target. A smoke
 * fails (exit code 1) on a lost turn or a missed margin.
 */
async function floorRuns(parts, config, deadline) {
  const runs = [];
  const files = [];
  for (let i = 0; i < parts.runs; i++) {
    if (parts.runs > 1) say(`Floor run ${i + 1} of ${parts.runs}`);
    const floor = await withWorkers(parts, config, ({ floorSides }) => runFloor(floorSides, config, deadline));
    const run = { date: new Date().toISOString(), machine: describeMachine(ROOT), floor };
    process.stdout.write(`\n${renderFloorText({ ...run, smoke: parts.smoke })}\n`);
    files.push(await writeResult(parts.smoke ? "smoke" : "floor", run));
    say(`Wrote ${files.at(-1)}`);
    runs.push(run);
  }
  if (runs.length > 1) {
    const medians = { date: new Date().toISOString(), machine: describeMachine(ROOT), runs: files, rows: judgeMedians(runs.map((r) => r.floor)) };
    process.stdout.write(`\n${renderMedians(medians)}\n`);
    say(`Wrote ${await writeResult("floor-medians", medians)}`);
  }
  if (parts.smoke) {
    const violations = smokeViolations(runs[0].floor);
    for (const v of violations) process.stdout.write(`SMOKE FAILED: ${v}\n`);
    if (violations.length > 0) process.exitCode = 1;
    else process.stdout.write("Smoke passed: every turn pushed once and checked, every margin held.\n");
  }
}

async function main() {
  const parts = readParts(process.argv.slice(2));
  const config = readConfig(process.env, { smoke: parts.smoke });
  for (const line of busyWarnings()) say(`WARNING: ${line}; figures taken now move with it.`);
  const startedAt = Date.now();
  const deadline = startedAt + config.deadlineS * 1000;
  // Ctrl-C or a kill must not leave workerd behind; the deadline bounds a hung run the same way.
  const onSignal = (signal) => {
    if (interrupted) return;
    interrupted = true;
    say(`\n${signal}: stopping the worker`);
    cleanup().finally(() => process.exit(130));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const watchdog = setTimeout(() => onSignal(`deadline of ${config.deadlineS} s`), config.deadlineS * 1000 + 30_000);
  watchdog.unref();
  try {
    if (parts.main || parts.conversations) await fullRun(parts, config, deadline, startedAt);
    else if (parts.floor) await floorRuns(parts, config, deadline);
  } finally {
    clearTimeout(watchdog);
  }
}

main().catch((error) => {
  if (interrupted) return; // the signal handler reports and exits
  say(`bench failed: ${error.stack ?? error}`);
  process.exitCode = 1;
});
