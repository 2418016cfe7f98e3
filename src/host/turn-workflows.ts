import type { TurnParams } from "../boundary/index.js";
import { taskTraceOf } from "../boundary/task-status.js";
import type { HitlRow } from "../db/hitl-store.js";
import type { ObjectParts } from "./lifecycle.js";

// The object's calls to its turns' Workflow instances: start one, wake one
// parked on a human, start a re-delivery.

/** The Workflow event that ends a wait for request `requestId`. */
export const eventTypeOf = (requestId: string) => `answer-${requestId}`;

/** Creates the instance; one that already exists counts as started. False when neither (the next reconcile pass retries). */
export async function startWorkflow(parts: ObjectParts, id: string, params: TurnParams): Promise<boolean> {
  const workflow = parts.agent.workflow();
  try {
    await workflow.create({ id, params });
    return true;
  } catch (error) {
    try {
      await workflow.get(id);
      return true;
    } catch {
      console.error(`turn ${id}: could not start its Workflow`, error);
      return false;
    }
  }
}

/** Ends these instances (their tasks were erased); one that finished, or never started, is fine as it is: it pushes nothing. */
export async function terminate(parts: ObjectParts, instanceIds: readonly string[]): Promise<void> {
  await Promise.allSettled(instanceIds.map(async (id) => (await parts.agent.workflow().get(id)).terminate()));
}

/** Tells a parked turn's Workflow that its wait is over; an outage is retried by the reconciler. */
export async function wake(parts: ObjectParts, request: HitlRow): Promise<void> {
  const turn = parts.db.turns.get(request.taskId);
  if (!turn) return;
  try {
    const instance = await parts.agent.workflow().get(turn.instanceId);
    await instance.sendEvent({ type: eventTypeOf(request.requestId), payload: { requestId: request.requestId } });
  } catch (error) {
    console.warn(`turn ${turn.instanceId}: could not wake it for request ${request.requestId}; the reconciler tries again`, error);
  }
}

/**
 * Starts the re-delivery of a task's dead letters to the configs queued for
 * them, unless a turn of the task is open (its end starts it, see
 * `turnDelivered`). It is a turn in the ledger, so the reconciler re-drives
 * it like any other and retention keeps the task until it ends.
 */
export async function redeliver(parts: ObjectParts, taskId: string, like: Pick<TurnParams, "tenant" | "agentId" | "origin">): Promise<void> {
  const { db } = parts;
  if (db.turns.get(taskId)) return;
  const row = db.tasks.get(taskId);
  if (!row) return;
  const instanceId = `redeliver-${crypto.randomUUID()}`;
  // Its pushes are of the task's turn: they carry that turn's trace.
  const trace = taskTraceOf(row);
  const params: TurnParams = { tenant: like.tenant, agentId: like.agentId, taskId, messageId: row.messageId, origin: like.origin, redeliver: true, trace };
  db.turns.open(taskId, instanceId, params, parts.agent.recovery().reportWithinMs);
  await parts.schedules.ensureReconciling();
  // One that does not start now is started by the reconciler's next pass.
  if (!(await startWorkflow(parts, instanceId, params))) console.warn(`task ${taskId}: its re-delivery did not start; the reconciler tries again`);
}
