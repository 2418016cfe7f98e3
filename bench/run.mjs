#!/usr/bin/env node
// `npm run bench`: measures the zero-trust edge against a real local workerd.
// See bench/README.md for what each figure means.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair } from "jose";
import { a2aCaller, getJson } from "./lib/a2a.mjs";
import { startGatekeeper } from "./lib/gatekeeper.mjs";
import { compare, runPool } from "./lib/load.mjs";
import { describeMachine } from "./lib/machine.mjs";
import { sleep } from "./lib/net.mjs";
import { renderReadme, renderText } from "./lib/report.mjs";
import { ratio } from "./lib/stats.mjs";
import { spawnWorker } from "./lib/worker.mjs";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH_DIR);

function readConfig(env) {
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
    largeTasks: num("BENCH_LARGE_TASKS", 10_000),
    seedConcurrency: num("BENCH_SEED_CONCURRENCY", 16),
    pageSize: 50,
    deadlineS: num("BENCH_DEADLINE_S", 900),
  };
}

const say = (line) => process.stderr.write(`${line}\n`);
let interrupted = false;

async function signingKeyJson() {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  return JSON.stringify({ ...(await exportJWK(privateKey)), kid: `bench-${Date.now()}` });
}

/** Seeds one caller's Durable Object with `count` tasks, printing progress for the long ones. */
async function seed(caller, count, { pushUrl, concurrency, deadline, label }) {
  let done = 0;
  let nextReport = 0.1;
  const { elapsedMs } = await runPool({
    count,
    concurrency,
    deadline,
    request: async (i) => {
      await caller.sendMessage(`bench task ${i}`, pushUrl);
      done++;
      if (count >= 1000 && done / count >= nextReport) {
        say(`  ${label}: ${done.toLocaleString("en-US")} / ${count.toLocaleString("en-US")} tasks`);
        nextReport += 0.1;
      }
    },
  });
  return elapsedMs;
}

/**
 * Waits until the gatekeeper has seen no model call or push for two seconds:
 * turns still running from SendMessage calls would compete with what is
 * measured next. Bounded; whatever still runs is counted by `measuring`.
 */
async function settle(gatekeeper, maxMs, deadline) {
  const until = Math.min(Date.now() + maxMs, deadline);
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
function assertNoReload(worker) {
  if (worker.state.reloads > 0) throw new Error("wrangler reloaded the Worker mid-run because a source file changed; run the bench again on a quiet tree");
}

/** A token whose `aud` were wrong would make every figure a 401: one real call proves the setup. */
async function checkAudience(caller, worker) {
  try {
    await caller.call("ListTasks", { pageSize: 1 });
  } catch (error) {
    throw new Error(`a verified call to ${worker.origin}/a2a failed, so the token setup is wrong (aud, jku or GATEKEEPER_ORIGINS): ${error.message}`);
  }
}

async function measureEdge({ worker, caller, gatekeeper, tally, config, deadline }) {
  const { task } = await caller.sendMessage("the task GetTask reads", gatekeeper.pushUrl);
  await settle(gatekeeper, 30_000, deadline);
  const cardUrl = `${worker.origin}/.well-known/agent-card.json`;
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

async function measureList({ gatekeeper, tally, callerFor, config, deadline }) {
  // Fresh identity keys per run: each is its own, empty Durable Object.
  const run = Date.now().toString(36);
  const small = await callerFor(`bench-small-${run}`);
  const large = await callerFor(`bench-large-${run}`);
  const seedOptions = { pushUrl: gatekeeper.pushUrl, concurrency: config.seedConcurrency, deadline };

  say(`ListTasks: seeding ${config.smallTasks} + ${config.largeTasks} tasks (SendMessage, concurrency ${config.seedConcurrency})`);
  await seed(small, config.smallTasks, { ...seedOptions, label: "small caller" });
  const seedMs = await seed(large, config.largeTasks, { ...seedOptions, label: "large caller" });
  await settle(gatekeeper, 120_000, deadline);

  const listSmall = small.prepared("ListTasks", { pageSize: config.pageSize });
  const listLarge = large.prepared("ListTasks", { pageSize: config.pageSize });
  const totals = { small: (await listSmall()).totalSize, large: (await listLarge()).totalSize };
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
  return {
    list: {
      small: { ...measured.small, totalSize: totals.small },
      large: { ...measured.large, totalSize: totals.large },
      ratio: { p50: ratio(measured.large.p50, measured.small.p50), p99: ratio(measured.large.p99, measured.small.p99) },
    },
    seeding: { tasks: config.largeTasks, elapsedMs: seedMs, rps: config.largeTasks / (seedMs / 1000) },
  };
}

async function writeOutputs(results) {
  const resultsDir = join(BENCH_DIR, "results");
  await mkdir(resultsDir, { recursive: true });
  await writeFile(join(resultsDir, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(BENCH_DIR, "README.md"), renderReadme(results));
}

async function main() {
  const config = readConfig(process.env);
  const startedAt = Date.now();
  const deadline = startedAt + config.deadlineS * 1000;
  const cleanups = [];
  const cleanup = async () => {
    while (cleanups.length) await cleanups.pop()().catch((error) => say(`cleanup: ${error.message}`));
  };
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

  let worker;
  try {
    const gatekeeper = await startGatekeeper();
    cleanups.push(gatekeeper.close);
    say(`Gatekeeper on ${gatekeeper.origin}; starting wrangler dev…`);
    worker = await spawnWorker({
      root: ROOT,
      vars: {
        A2A_SIGNING_KEY: await signingKeyJson(),
        GATEKEEPER_ORIGINS: JSON.stringify([gatekeeper.origin]),
        // Should a turn run, its model is the gatekeeper's stub: no network, no cost, no waiting.
        OPENAI_BASE_URL: gatekeeper.modelBaseUrl,
        OPENAI_API_KEY: "bench",
        OPENAI_MODEL: "bench",
      },
    });
    cleanups.push(worker.stop);
    await worker.ready(120_000);
    say(`Worker on ${worker.origin}`);

    // Tokens outlive the whole run (it is abandoned at the deadline anyway), so none expires mid-measurement.
    const ttl = config.deadlineS + 120;
    const callerFor = async (key) => a2aCaller({ origin: worker.origin, token: await gatekeeper.mint(`${worker.origin}/a2a`, key, ttl) });
    const edgeCaller = await callerFor(`bench-edge-${Date.now().toString(36)}`);
    await checkAudience(edgeCaller, worker);

    const tally = { turnTrafficWhileMeasuring: 0 };
    const edge = await measureEdge({ worker, caller: edgeCaller, gatekeeper, tally, config, deadline });
    assertNoReload(worker);
    const { list, seeding } = await measureList({ gatekeeper, tally, callerFor, config, deadline });
    assertNoReload(worker);

    const results = {
      date: new Date().toISOString(),
      machine: describeMachine(ROOT),
      config,
      edge,
      list,
      seeding,
      gatekeeper: { ...gatekeeper.counts, ...tally },
      worker: { reloads: worker.state.reloads },
      durationS: (Date.now() - startedAt) / 1000,
    };
    process.stdout.write(`\n${renderText(results)}\n`);
    await writeOutputs(results);
    say("Wrote bench/results/latest.json and bench/README.md");
  } catch (error) {
    // The Worker's own account of a failure is in wrangler's output, not in the reply.
    if (worker && !interrupted) {
      await sleep(1_000); // workerd's log of the failure trails the reply
      say(`Last lines from wrangler dev:\n${worker.logTail()}`);
      if (worker.state.reloads > 0) say("wrangler reloaded the Worker during the run (a source file changed): that is the likely cause.");
    }
    throw error;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

main().catch((error) => {
  if (interrupted) return; // the signal handler reports and exits
  say(`bench failed: ${error.stack ?? error}`);
  process.exitCode = 1;
});
