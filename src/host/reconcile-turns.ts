import type { TurnParams } from "../boundary/index.js";
import type { TurnLedger, TurnRow } from "../db/turn-ledger.js";
import type { RecoveryPolicy } from "./recovery-policy.js";

/** Statuses after which an instance will make no more progress by itself. */
const DEAD = new Set(["errored", "terminated", "unknown"]);

export interface ReconcileDeps {
  ledger: TurnLedger;
  workflow: Workflow<TurnParams>;
  policy: RecoveryPolicy;
  /** Fails the task, in the agent's words for a turn nothing could finish. */
  abandon: (taskId: string) => void;
  start: (instanceId: string, params: TurnParams) => Promise<void>;
  /** Whether this very object is executing the turn's model work right now. */
  runningHere: (taskId: string) => boolean;
  now?: () => number;
}

/**
 * One pass over the unfinished turns: re-drives every turn whose Workflow
 * instance errored, was terminated, is unknown (never created, or lost with
 * a local engine that was killed), or stopped reporting; after the policy's
 * re-drives, fails the task and starts an instance that only announces it.
 * Returns how many turns are still unfinished.
 */
export async function reconcileTurns(deps: ReconcileDeps): Promise<number> {
  const now = (deps.now ?? Date.now)();
  for (const row of deps.ledger.all()) {
    const status = await instanceStatus(deps.workflow, row.instanceId);
    if (status === "complete") {
      deps.ledger.close(row.taskId);
      continue;
    }
    const silentFor = now - row.progressAt;
    // Before the outcome is recorded, a "running" instance must be running
    // the turn in this object: if it is not, and nothing reported for a
    // while, the engine lost it (a local engine does not resume a killed
    // instance). Later phases may legitimately sit in delivery backoff.
    const lostMidRun = status === "running" && row.outcomeJson === null && !deps.runningHere(row.taskId) && silentFor > deps.policy.runGraceMs;
    const stalled = lostMidRun || silentFor > deps.policy.stallAfterMs;
    if (!DEAD.has(status) && !stalled) continue;
    await redrive(deps, row, status);
  }
  return deps.ledger.size;
}

async function redrive(deps: ReconcileDeps, row: TurnRow, status: string): Promise<void> {
  const params = JSON.parse(row.paramsJson) as TurnParams;
  if (row.attempts > deps.policy.maxRedrives) {
    // Even the instance that only announces the failure could not finish.
    console.error(`turn ${row.instanceId}: abandoned after ${row.attempts} attempts (last status ${status})`);
    deps.ledger.close(row.taskId);
    return;
  }
  if (row.attempts === deps.policy.maxRedrives) {
    deps.abandon(row.taskId);
    // A fresh instance: the task is terminal now, so it goes straight to delivery.
    const announcer = `${row.instanceId.slice(0, 80)}-final`;
    deps.ledger.redriven(row.taskId, announcer);
    await deps.start(announcer, params);
    return;
  }
  deps.ledger.redriven(row.taskId, row.instanceId);
  if (status === "unknown") {
    await deps.start(row.instanceId, params);
  } else {
    try {
      await (await deps.workflow.get(row.instanceId)).restart();
    } catch (error) {
      console.error(`turn ${row.instanceId}: restart failed`, error);
    }
  }
}

async function instanceStatus(workflow: Workflow<TurnParams>, id: string): Promise<string> {
  try {
    return (await (await workflow.get(id)).status()).status;
  } catch {
    return "unknown";
  }
}
