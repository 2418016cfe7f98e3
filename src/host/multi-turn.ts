import { invalidParams, taskNotFound, unsupportedOperation } from "../a2a/errors.js";
import type { BeginTask, Begun, TaskJson } from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import type { HitlRow } from "../db/hitl-store.js";
import { answer, answerOf } from "../round/hitl/index.js";
import { writeStatus } from "./task-events.js";
import { taskOf } from "../boundary/task-status.js";
import { shapeTask } from "./task-wire.js";

/** A continuation's reply, and the request its answer settled (whose turn must be woken). */
export type Continued = Begun & { answered?: HitlRow };

/**
 * A message naming a task (CONTRACT's multi-turn rules): unknown → -32001;
 * another context → -32602; terminal → -32004; waiting for a human → the
 * answer (first wins; a repeat or a loser gets the task as it is); busy →
 * -32004 with the task's state, unless it repeats an answer already taken.
 * Synchronous: it runs inside the accept's write block.
 */
export function continueTask(db: AgentDB, input: BeginTask, now: number, fingerprint?: string): Continued {
  const taskId = input.message.taskId!;
  const row = db.tasks.get(taskId);
  if (!row) throw taskNotFound(taskId);
  if (input.message.contextId && input.message.contextId !== row.contextId) {
    throw invalidParams(`params.message.contextId differs from the context of task ${JSON.stringify(taskId)}`);
  }
  const shape = (task: TaskJson) => shapeTask(task, { historyLength: input.historyLength, includeArtifacts: true });
  const task = taskOf(row);
  // An answer to a request already settled (a repeat, a loser, a late one): the task as it is, whatever its state.
  const repeat = answerOf(input.message).requestId;
  const settled = repeat ? db.hitl.get(repeat) : undefined;
  if (settled && settled.taskId === taskId && settled.status !== "open") return { task: shape(task), settledBefore: true };
  if (db.tasks.isFinal(row.state)) {
    throw unsupportedOperation(`Task ${JSON.stringify(taskId)} is ${row.state}: it takes no more messages; send one without taskId to start a new task`, {
      taskState: row.state,
    });
  }
  if (row.state !== "TASK_STATE_INPUT_REQUIRED") {
    throw unsupportedOperation(`Task ${JSON.stringify(taskId)} is ${row.state} and is not waiting for input`, { taskState: row.state });
  }
  const verdict = answer(db.hitl, task, input.message, input.caller ?? { key: "" }, now);
  if (verdict.kind === "answered") writeStatus(db, verdict.task, now);
  db.tasks.recordMessage(input.message.messageId, taskId, fingerprint);
  if (verdict.kind === "unchanged") return { task: shape(verdict.task), settledBefore: true };
  return { task: shape(verdict.task), answered: verdict.request };
}
