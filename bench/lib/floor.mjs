// The floor comparison (bench/README.md "Floor"): the project's turns and
// edge against the floor worker's (bench/floor/worker.ts), and its turns against
// the contract floor's (bench/floor/contract-caller.ts), measured in the same
// run, in alternating rounds (project, floor, contract; contract, floor,
// project; …) so a slow spell of the machine lands on every side alike.
import { CARD_PATH } from "../../src/a2a/wire.ts";
import { getJson } from "./a2a.mjs";
import { compare, runPool } from "./load.mjs";
import { CPU_ROLES, addCpu, between, sample } from "./process-cpu.mjs";
import { percentile, ratio } from "./stats.mjs";
import { measureTurns } from "./turns.mjs";

/** Issue 19's targets the long run reports against: the large caller's at-rest p50 ÷ the floor's, its GetTask ÷ card. */
export const FLOOR_TARGETS = { sendToPushP50: 1.3, getTaskOverCard: 0.8 };

/** Turns each side needs in one workerd for a floor measurement of `config`. */
export const floorTurnsNeeded = (config) => 1 + 2 * config.callers + config.turns + config.sequential;

/** Round `round`'s share of `total` turns split over `rounds`: the first rounds take the remainder. */
export const roundShare = (total, rounds, round) => Math.floor(total / rounds) + (round < total % rounds ? 1 : 0);

/** The late model calls and pushes of batches, from their watchers' `stop` (lib/turns.mjs). */
export const sumLate = (watchers) =>
  watchers.map((stop) => stop()).reduce((a, b) => ({ modelCalls: a.modelCalls + b.modelCalls, pushes: a.pushes + b.pushes }), { modelCalls: 0, pushes: 0 });

/**
 * A fresh workerd for `side` when `needed` more turns do not fit in its open
 * files (lib/host.mjs), once its turns have settled; more than any one
 * process can run is an error, not a failure halfway through.
 */
export async function ensureTurnRoom({ host, gatekeeper }, needed, { settle, say, label }) {
  if (needed > host.turnBudget) throw new Error(`${label}: ${needed} turns do not fit in one workerd (${host.turnBudget}, see lib/host.mjs)`);
  if (host.turnRoom() >= needed) return;
  say(`${label}: a fresh workerd first (its open files have no room for ${needed} more turns)`);
  await settle(host, gatekeeper, 300_000);
  await host.restart();
}

/** The sides whose edge (the card and a verified GetTask) is measured: the contract floor's edge is the floor's. */
const EDGE_SIDES = /** @type {const} */ (["project", "floor"]);

/** The turn figures of project ÷ `other` (above 1 for a latency is slower, below 1 for a rate is fewer). */
const turnRatios = (p, other) => ({
  turnsPerS: ratio(p.loaded.turnsPerS, other.loaded.turnsPerS),
  sendToPushP50: ratio(p.atRest.sendToPush.p50, other.atRest.sendToPush.p50),
  sendToPushP95: ratio(p.atRest.sendToPush.p95, other.atRest.sendToPush.p95),
  acceptP50: ratio(p.atRest.accept.p50, other.atRest.accept.p50),
  loadedSendToPushP50: ratio(p.loaded.sendToPush.p50, other.loaded.sendToPush.p50),
  loadedAcceptP50: ratio(p.loaded.accept.p50, other.loaded.accept.p50),
  cpuPerTurn:
    p.cpuPerTurn && other.cpuPerTurn ? Object.fromEntries(Object.keys(p.cpuPerTurn).map((k) => [k, ratio(p.cpuPerTurn[k], other.cpuPerTurn[k])])) : null,
});

/**
 * Measures every side. `sides` are `{ project, floor, contract }`, each `{ host, gatekeeper }`
 * (a gatekeeper of its own each: its counts and pushes are that side's alone);
 * the contract floor's turns are measured, not its edge (it is the floor's);
 * `settle(host, gatekeeper, maxMs)` waits for a host's turns to die down.
 * @param {{ sides: Record<"project" | "floor" | "contract", { host: any, gatekeeper: any }>, config: { callers: number, turns: number, sequential: number,
 *   n: number, concurrency: number, warmup: number, rounds: number }, deadline: number, settle: Function, say: (line: string) => void,
 *   profile?: { side: string, start: (host: any) => Promise<{ stop: () => Promise<any> }>, done: (profile: any) => Promise<void> } }} options
 */
export async function measureFloor({ sides, config, deadline, settle, say, profile }) {
  const names = /** @type {const} */ (["project", "floor", "contract"]);
  const run = Date.now().toString(36);
  /** Per side: its callers (16 at a time, and one at rest) and the task its GetTask reads. */
  const setup = {};
  for (const name of names) {
    const { host, gatekeeper } = sides[name];
    await ensureTurnRoom(sides[name], floorTurnsNeeded(config), { settle, say, label: `Floor, ${name}` });
    const callers = await Promise.all(Array.from({ length: config.callers }, (_, i) => host.callerFor(`bench-floor-${run}-${i}`)));
    const atRest = await host.callerFor(`bench-floor-${run}-rest`);
    const common = { gatekeeper, workerOrigin: host.origin, deadline };
    const { task } = await atRest.sendMessage("the task GetTask reads", gatekeeper.pushUrl);
    say(`Floor: ${name} warm-up (${config.callers} turns from ${config.callers} callers, then ${config.callers} at rest)`);
    (await measureTurns({ ...common, callers, count: config.callers, concurrency: config.callers, label: "warm-up" })).stop();
    (await measureTurns({ ...common, caller: atRest, count: config.callers, concurrency: 1, label: "warm-up" })).stop();
    await settle(host, gatekeeper, 30_000);
    setup[name] = { callers, atRest, common, taskId: task.id };
  }

  /** @type {Record<string, { loaded: any[], atRest: any[] }>} */
  const batches = Object.fromEntries(names.map((name) => [name, { loaded: [], atRest: [] }]));
  /** Per side: CPU seconds its wrangler dev spent by process over its measured turns (null off Linux). */
  const cpu = Object.fromEntries(names.map((name) => [name, null]));
  const watchers = [];
  const share = (total, round) => roundShare(total, config.rounds, round);
  for (let round = 0; round < config.rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    say(`Floor: round ${round + 1} of ${config.rounds} (${order.join(", ")})`);
    for (const name of order) {
      const { callers, atRest, common } = setup[name];
      // BENCH_PROFILE: one side's first loaded batch under the profiler (lib/profile.mjs).
      const profiling = profile && name === profile.side && round === 0 ? await profile.start(sides[name].host) : undefined;
      const { worker } = sides[name].host;
      const before = sample(worker.pid, worker.port);
      const loaded = await measureTurns({ ...common, callers, count: share(config.turns, round), concurrency: config.callers, label: `${name} loaded` });
      if (profiling && profile) await profile.done(await profiling.stop());
      const rest = await measureTurns({ ...common, caller: atRest, count: share(config.sequential, round), concurrency: 1, label: `${name} at rest` });
      cpu[name] = addCpu(cpu[name], between(before, sample(worker.pid, worker.port)));
      batches[name].loaded.push(loaded.summary);
      batches[name].atRest.push(rest.summary);
      watchers.push(loaded.stop, rest.stop);
    }
  }
  const late = sumLate(watchers);

  for (const name of names) await settle(sides[name].host, sides[name].gatekeeper, 60_000);
  // The project's and the floor's card and GetTask, all four kinds in alternating blocks.
  const kinds = EDGE_SIDES.flatMap((name) => {
    const { host } = sides[name];
    const { atRest, taskId } = setup[name];
    return [
      { name: `${name}Card`, request: () => getJson(`${host.origin}${CARD_PATH}`) },
      { name: `${name}GetTask`, request: atRest.prepared("GetTask", { id: taskId }) },
    ];
  });
  say(`Floor: edge, ${config.warmup} warm-up and ${config.n} requests per kind at concurrency ${config.concurrency}`);
  for (const kind of kinds) await runPool({ count: config.warmup, concurrency: config.concurrency, request: kind.request, deadline });
  const edge = await compare({ kinds, count: config.n, concurrency: config.concurrency, rounds: config.rounds, deadline });

  const result = {};
  for (const name of names) {
    result[name] = { loaded: mergeTurns(batches[name].loaded), atRest: mergeTurns(batches[name].atRest), cpuPerTurn: perTurn(cpu[name], batches[name]) };
  }
  for (const name of EDGE_SIDES) {
    const card = edge[`${name}Card`];
    const getTask = edge[`${name}GetTask`];
    Object.assign(result[name], { card, getTask, getTaskOverCard: { throughput: ratio(getTask.rps, card.rps), p50: ratio(getTask.p50, card.p50) } });
  }
  const p = result.project;
  const f = result.floor;
  return {
    config,
    ...result,
    late,
    ratios: {
      ...turnRatios(p, f),
      getTaskRps: ratio(p.getTask.rps, f.getTask.rps),
      getTaskP50: ratio(p.getTask.p50, f.getTask.p50),
      cardRps: ratio(p.card.rps, f.card.rps),
      getTaskOverCard: ratio(p.getTaskOverCard.throughput, f.getTaskOverCard.throughput),
    },
    contractRatios: turnRatios(p, result.contract),
  };
}

/** CPU ms per measured turn (loaded and at rest together) by process, and all of them: `null` without figures. */
function perTurn(seconds, batches) {
  if (!seconds) return null;
  const turns = [...batches.loaded, ...batches.atRest].reduce((n, s) => n + s.turns, 0);
  const ms = Object.fromEntries(CPU_ROLES.map((role) => [role, (1000 * seconds[role]) / turns]));
  return { ...ms, all: CPU_ROLES.reduce((n, role) => n + ms[role], 0) };
}

/**
 * One side's turn batches of every round as one: turns/s over the summed
 * wall time of its batches, percentiles over every turn's own timestamps
 * (the summaries' `samples`, in ms after the turn's SendMessage), the checks added up.
 */
export function mergeTurns(summaries) {
  const samples = summaries.flatMap((s) => s.samples).filter((t) => t.t1 !== null && t.t4 !== null);
  const stats = (values) => {
    const sorted = Float64Array.from(values).sort();
    return { count: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
  };
  const turns = summaries.reduce((n, s) => n + s.turns, 0);
  const elapsedMs = summaries.reduce((n, s) => n + s.elapsedMs, 0);
  const sum = (of) => summaries.reduce((n, s) => n + of(s.checks), 0);
  const modelCallsPerTurn = {};
  for (const s of summaries) for (const [k, v] of Object.entries(s.checks.modelCallsPerTurn)) modelCallsPerTurn[k] = (modelCallsPerTurn[k] ?? 0) + v;
  return {
    turns,
    concurrency: summaries[0]?.concurrency,
    elapsedMs,
    turnsPerS: turns / (elapsedMs / 1000),
    accept: stats(samples.map((t) => t.t1)),
    sendToPush: stats(samples.map((t) => t.t4)),
    checks: {
      pushed: sum((c) => c.pushed),
      missing: sum((c) => c.missing),
      duplicatePushes: sum((c) => c.duplicatePushes),
      problems: sum((c) => c.problems),
      firstProblems: summaries.flatMap((s) => s.checks.firstProblems).slice(0, 5),
      modelCallsPerTurn,
      foreign: sum((c) => c.foreign.model + c.foreign.push),
      callbackTokens: { distinct: sum((c) => c.callbackTokens.distinct), verified: sum((c) => c.callbackTokens.verified) },
    },
  };
}
