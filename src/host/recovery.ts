import type { TurnParams } from "../boundary/index.js";
import { sweepOnce } from "../db/retention.js";
import type { TurnLedger, TurnRow } from "../db/turn-ledger.js";
import type { Deliveries } from "./deliveries.js";
import type { ObjectParts } from "./lifecycle.js";
import type { RecoveryPolicy } from "./recovery-policy.js";
import type { Turns } from "./turns.js";
import { startWorkflow, wake } from "./turn-workflows.js";

// No turn is left hanging: the object's reconcile pass over its open turns,
// and retention, which lets finished, delivered tasks go.

/** No turn is left hanging: the object's schedules, the reconcile pass and retention. */
export class Recovery {
  constructor(
    private readonly parts: ObjectParts,
    private readonly turns: Turns,
    private readonly deliveries: Deliveries,
    /** Runs the retention pass again at once (the SDK's scheduler, by name). */
    private readonly sweepAgain: () => Promise<unknown>,
  ) {}

  /** Every wake of the object: open turns mean a reconcile schedule. */
  async onStart(): Promise<void> {
    const { db, schedules } = this.parts;
    if (db.turns.size > 0) {
      await schedules.ensureReconciling();
      await schedules.armDueCheck();
    }
    await schedules.armRetention();
  }

  /** One pass over the open turns: re-drives what errored, vanished or stalled (see `reconcileTurns`). */
  async reconcile(): Promise<Map<string, ReconcileAction>> {
    const { db, agent, events, schedules } = this.parts;
    const actions = await reconcileTurns({
      ledger: db.turns,
      workflow: agent.workflow(),
      policy: agent.recovery(),
      start: (id, params) => startWorkflow(this.parts, id, params),
      runningHere: (taskId) => this.turns.runningHere(taskId),
      close: async (taskId, instanceId) => void (await this.deliveries.delivered(taskId, instanceId)),
      abandon: (taskId) => this.turns.abandon(taskId),
    });
    for (const [taskId, action] of actions) {
      if (action === "alive" || action === "closed") continue;
      // Its announcer could not finish either: the abandoned turn's wide line, if still kept, is written as it is.
      if (action === "gave-up") events.log.release(taskId);
      const turn = db.turns.get(taskId);
      const instanceId = turn?.instanceId ?? "";
      events.emit("reconciler.action", taskId, { action, instanceId }, ["reconciled", instanceId, turn?.attempts ?? 0, action]);
    }
    // A wake that did not arrive (an outage, a Worker restart) is sent again until the turn takes it in.
    for (const request of db.hitl.unresumed()) if (db.turns.get(request.taskId)) await wake(this.parts, request);
    if (db.turns.size === 0) await schedules.stopReconciling();
    else await schedules.armDueCheck();
    return actions;
  }

  /** Retention, in bounded batches (`sweepOnce`, docs/retention.md); a full batch comes back at once for the rest. */
  async sweep(): Promise<{ tasks: number; messageIds: number; conversations: number }> {
    const { db, agent } = this.parts;
    const { more, ...swept } = await sweepOnce(db, agent.limits().retention, Date.now(), (ids) => agent.tasksDeleted(ids));
    if (more) await this.sweepAgain();
    return swept;
  }
}

/** Statuses after which an instance makes no more progress by itself. */
const DEAD = new Set(["errored", "terminated"]);

/** What one pass did with one turn (for the logs, and for the specs). */
export type ReconcileAction = "closed" | "alive" | "unreachable" | "restarted" | "started" | "abandoned" | "gave-up" | "failed-to-redrive";

export interface ReconcileDeps {
  ledger: TurnLedger;
  workflow: Workflow<TurnParams>;
  policy: RecoveryPolicy;
  /** Fails the task, in the agent's words for a turn nothing could finish. */
  abandon: (taskId: string) => void;
  /** Creates an instance; resolves false when the Workflows API refused or failed (an outage is not an attempt). */
  start: (instanceId: string, params: TurnParams) => Promise<boolean>;
  /** Whether this very object is running the turn's model work right now. */
  runningHere: (taskId: string) => boolean;
  /** Closes instance `instanceId`'s record of the turn as its own last step would: re-deliveries waiting for the task start. */
  close: (taskId: string, instanceId: string) => Promise<void>;
  now?: () => number;
}

/**
 * The Workflows binding says an instance does not exist only by its error's
 * message: `instance.not_found` is the API's documented identifier, and the
 * one error the reconciler treats as a definite answer. Anything else (the
 * API being down, a timeout) tells nothing about the instance.
 */
export const isInstanceNotFound = (error: unknown): boolean => error instanceof Error && /\binstance\.not_found\b/.test(error.message);

type Status = { kind: "known"; status: string } | { kind: "missing" } | { kind: "unreachable" };

async function instanceStatus(workflow: Workflow<TurnParams>, id: string): Promise<Status> {
  try {
    return { kind: "known", status: (await (await workflow.get(id)).status()).status };
  } catch (error) {
    return isInstanceNotFound(error) ? { kind: "missing" } : { kind: "unreachable" };
  }
}

/**
 * One pass over the open turns. A turn is alive while its model work runs in
 * this object and its instance lives, or while its instance reports within what its last report
 * promised (`expectedBy`: a heartbeat during a model call, the next attempt of
 * a delivery in backoff, the next step otherwise) plus the policy's grace.
 * A turn is re-driven when its instance errored, was terminated, does not
 * exist, or went silent past that; after the policy's re-drives its task is
 * failed and an instance started that only announces it. A Workflows API
 * that fails is no evidence and no attempt: the turn waits for the next pass.
 * Returns what it did, per task.
 */
export async function reconcileTurns(deps: ReconcileDeps): Promise<Map<string, ReconcileAction>> {
  const now = (deps.now ?? Date.now)();
  const actions = new Map<string, ReconcileAction>();
  for (const row of deps.ledger.all()) {
    const found = await instanceStatus(deps.workflow, row.instanceId);
    if (found.kind === "unreachable") {
      actions.set(row.taskId, "unreachable");
      continue;
    }
    if (found.kind === "known" && found.status === "complete") {
      await deps.close(row.taskId, row.instanceId);
      actions.set(row.taskId, "closed");
      continue;
    }
    // Work running here is alive however long it takes; a dead or missing
    // instance is re-driven all the same (its new run joins the one here).
    const silent = now > row.expectedBy + deps.policy.lostAfterMs && !deps.runningHere(row.taskId);
    if (found.kind === "known" && !DEAD.has(found.status) && !silent) {
      actions.set(row.taskId, "alive");
      continue;
    }
    actions.set(row.taskId, await redrive(deps, row, found));
  }
  return actions;
}

async function redrive(deps: ReconcileDeps, row: TurnRow, found: Status): Promise<ReconcileAction> {
  const params = JSON.parse(row.paramsJson) as TurnParams;
  const expect = deps.policy.reportWithinMs;
  if (row.attempts > deps.policy.maxRedrives) {
    // Even the instance that only announces the failure could not finish.
    console.error(`turn ${row.instanceId}: abandoned after ${row.attempts} attempts`);
    await deps.close(row.taskId, row.instanceId);
    return "gave-up";
  }
  if (row.attempts === deps.policy.maxRedrives) {
    deps.abandon(row.taskId);
    // A fresh instance: the task is terminal now, so it goes straight to delivery.
    const announcer = `${row.instanceId.slice(0, 80)}-final`;
    if (!(await deps.start(announcer, params))) return "failed-to-redrive";
    deps.ledger.redriven(row.taskId, row.instanceId, announcer, expect);
    return "abandoned";
  }
  if (found.kind === "missing") {
    if (!(await deps.start(row.instanceId, params))) return "failed-to-redrive";
    deps.ledger.redriven(row.taskId, row.instanceId, row.instanceId, expect);
    return "started";
  }
  try {
    await (await deps.workflow.get(row.instanceId)).restart();
  } catch (error) {
    console.error(`turn ${row.instanceId}: restart failed, trying again next pass`, error);
    return "failed-to-redrive";
  }
  deps.ledger.redriven(row.taskId, row.instanceId, row.instanceId, expect);
  return "restarted";
}
