// The long run (bench/README.md "Long run"): does a turn cost more for a caller
// that holds 10,000 tasks than for a fresh one? Both callers are measured in
// the same workerd, in alternating rounds (large, fresh; fresh, large; …).
import { CARD_PATH } from "../../src/a2a/wire.ts";
import { getJson } from "./a2a.mjs";
import { ensureTurnRoom, mergeTurns, roundShare, sumLate } from "./floor.mjs";
import { compare, runPool } from "./load.mjs";
import { ratio } from "./stats.mjs";
import { measureTurns } from "./turns.mjs";

/** Turns one long-run measurement of `config` runs in the project's workerd. */
export const longRunTurnsNeeded = (config) => 2 * (config.warmup + config.sequential + config.turns) + 1;
/** Turns it runs in the floor worker's: its caller's warm-up and at-rest share. */
export const longRunFloorTurnsNeeded = (config) => config.warmup + config.sequential;

/**
 * `large`: the identity key of the caller that holds the seeded tasks, and the
 * id of one of them (its GetTask reads it). A fresh caller is made here.
 * `floor` (the floor worker and its gatekeeper, lib/floor.mjs): a fresh caller
 * of its own takes an at-rest share in every round too (last in the first
 * round, first in the second, …), each time after the project's turns have settled,
 * so the large caller is compared with the floor measured alongside.
 * `settle(host, gatekeeper, maxMs)` waits for a host's turns to die down.
 * @param {{ host: any, gatekeeper: any, large: { key: string, taskId: string, tasks: number }, floor?: { host: any, gatekeeper: any },
 *   config: { sequential: number, turns: number, concurrency: number, n: number, getTaskConcurrency: number, warmup: number, edgeWarmup: number, rounds: number },
 *   deadline: number, settle: (host: any, gatekeeper: any, maxMs: number) => Promise<void>, say: (line: string) => void }} options
 */
export async function measureLongRun({ host, gatekeeper, large, floor, config, deadline, settle, say }) {
  const project = { host, gatekeeper };
  await ensureTurnRoom(project, longRunTurnsNeeded(config), { settle, say, label: "Long run, project" });
  if (floor) await ensureTurnRoom(floor, longRunFloorTurnsNeeded(config), { settle, say, label: "Long run, floor" });
  // After any restart: a fresh process has another origin, so each caller is asked for here.
  const names = /** @type {const} */ (["large", "fresh"]);
  const callers = { large: await host.callerFor(large.key), fresh: await host.callerFor(`bench-long-fresh-${Date.now().toString(36)}`) };
  const { task: freshTask } = await callers.fresh.sendMessage("the task GetTask reads", gatekeeper.pushUrl);
  const taskIds = { large: large.taskId, fresh: freshTask.id };
  const common = { gatekeeper, workerOrigin: host.origin, deadline };
  const floorRest = floor && {
    caller: await floor.host.callerFor(`bench-long-floor-${Date.now().toString(36)}`),
    common: { gatekeeper: floor.gatekeeper, workerOrigin: floor.host.origin, deadline },
  };
  for (const name of names) {
    say(`Long run: ${name} caller warm-up (${config.warmup} turns)`);
    (await measureTurns({ ...common, caller: callers[name], count: config.warmup, concurrency: 1, label: "warm-up" })).stop();
  }
  if (floorRest) (await measureTurns({ ...floorRest.common, caller: floorRest.caller, count: config.warmup, concurrency: 1, label: "warm-up" })).stop();
  await settle(host, gatekeeper, 30_000);
  if (floor) await settle(floor.host, floor.gatekeeper, 30_000);

  /** @type {Record<"large" | "fresh", { atRest: any[], open: any[] }>} */
  const batches = { large: { atRest: [], open: [] }, fresh: { atRest: [], open: [] } };
  /** @type {any[]} */
  const floorBatches = [];
  const watchers = [];
  const floorShare = async (round) => {
    if (!floorRest) return;
    // The project's last Workflow steps (past their pushes) are not to land on the floor's turns.
    await settle(host, gatekeeper, 30_000);
    const rest = await measureTurns({
      ...floorRest.common,
      caller: floorRest.caller,
      count: roundShare(config.sequential, config.rounds, round),
      concurrency: 1,
      label: "floor at rest",
    });
    floorBatches.push(rest.summary);
    watchers.push(rest.stop);
  };
  for (let round = 0; round < config.rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    const sequence = !floorRest ? order : round % 2 === 0 ? [...order, "floor"] : ["floor", ...order];
    say(`Long run: round ${round + 1} of ${config.rounds} (${sequence.join(", ")})`);
    for (const name of sequence) {
      if (name === "floor") {
        await floorShare(round);
        continue;
      }
      const caller = callers[name];
      const rest = await measureTurns({
        ...common,
        caller,
        count: roundShare(config.sequential, config.rounds, round),
        concurrency: 1,
        label: `${name} at rest`,
      });
      const open = await measureTurns({
        ...common,
        caller,
        count: roundShare(config.turns, config.rounds, round),
        concurrency: config.concurrency,
        label: `${name} open`,
      });
      batches[name].atRest.push(rest.summary);
      batches[name].open.push(open.summary);
      watchers.push(rest.stop, open.stop);
    }
  }
  const late = sumLate(watchers);
  await settle(host, gatekeeper, 60_000);
  if (floor) await settle(floor.host, floor.gatekeeper, 60_000);

  const kinds = [
    { name: "card", request: () => getJson(`${host.origin}${CARD_PATH}`) },
    ...names.map((name) => ({ name, request: callers[name].prepared("GetTask", { id: taskIds[name] }) })),
  ];
  say(`Long run: GetTask of each caller and the card, ${config.n} requests per kind at concurrency ${config.getTaskConcurrency}`);
  for (const kind of kinds) await runPool({ count: config.edgeWarmup, concurrency: config.getTaskConcurrency, request: kind.request, deadline });
  const edge = await compare({ kinds, count: config.n, concurrency: config.getTaskConcurrency, rounds: config.rounds, deadline });

  const side = (name) => ({
    atRest: mergeTurns(batches[name].atRest),
    open: mergeTurns(batches[name].open),
    getTask: edge[name],
    getTaskOverCard: ratio(edge[name].rps, edge.card.rps),
  });
  const l = side("large");
  const f = side("fresh");
  const floorAtRest = floorRest ? mergeTurns(floorBatches) : undefined;
  return {
    config,
    tasks: large.tasks,
    large: l,
    fresh: f,
    floorAtRest,
    card: edge.card,
    late,
    // Large ÷ fresh: above 1 for a latency is slower, below 1 for a rate is fewer; flat is 1.
    ratios: {
      sendToPushP50: ratio(l.atRest.sendToPush.p50, f.atRest.sendToPush.p50),
      sendToPushP95: ratio(l.atRest.sendToPush.p95, f.atRest.sendToPush.p95),
      acceptP50: ratio(l.atRest.accept.p50, f.atRest.accept.p50),
      openTurnsPerS: ratio(l.open.turnsPerS, f.open.turnsPerS),
      openSendToPushP50: ratio(l.open.sendToPush.p50, f.open.sendToPush.p50),
      getTaskRps: ratio(l.getTask.rps, f.getTask.rps),
      getTaskP50: ratio(l.getTask.p50, f.getTask.p50),
      getTaskOverCard: ratio(l.getTaskOverCard, f.getTaskOverCard),
      // The large caller over the floor worker's fresh caller, at rest in the same rounds.
      overFloorSendToPushP50: floorAtRest ? ratio(l.atRest.sendToPush.p50, floorAtRest.sendToPush.p50) : null,
    },
  };
}
