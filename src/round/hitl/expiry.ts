import { HITL_TIMEOUT_TYPE } from "../../a2a/wire.js";
import type { HitlWords } from "../../agent/policy.js";
import type { TaskJson } from "../../boundary/index.js";
import { agentMessage, taskOf, withState } from "../../boundary/task-status.js";
import type { HitlRow, HitlStore } from "../../db/hitl-store.js";
import type { TaskStore } from "../../db/task-store.js";
import type { Settlement } from "./answer.js";

/**
 * A request's expiry: settled expired (unless answered first) and, when its
 * task still waits, the task back to WORKING with a status message that says
 * so (the `hitl/timeout` data part beside the agent's words), to be written.
 */
export function expire(
  db: { hitl: HitlStore; tasks: TaskStore },
  requestId: string,
  words: HitlWords,
  now: number,
): { request: HitlRow; task?: TaskJson } | undefined {
  const settled = db.hitl.settle(requestId, "expired", { outcome: "expired" } satisfies Settlement);
  if (settled.kind !== "settled") return undefined;
  const row = db.tasks.get(settled.row.taskId);
  if (row?.state !== "TASK_STATE_INPUT_REQUIRED") return { request: settled.row };
  const task = taskOf(row);
  const message = { ...agentMessage(task, ""), parts: [{ text: words.timedOut }, { data: { type: HITL_TIMEOUT_TYPE, requestId } }] };
  return { request: settled.row, task: withState(task, "TASK_STATE_WORKING", now, message) };
}
