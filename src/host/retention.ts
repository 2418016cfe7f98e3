import type { AgentDB } from "../db/agent-db.js";
import { DAY_MS } from "./budget.js";
import type { LifecycleLimits } from "./lifecycle.js";

/** Retention deletes at most this many rows per pass, then comes back at once for more. */
const RETENTION_BATCH = 200;

/** What one retention pass removed; `more`: a batch came back full, so another pass follows at once. */
export interface Swept {
  tasks: number;
  messageIds: number;
  more: boolean;
}

/**
 * One bounded retention pass: finished, delivered tasks past
 * `finishedTaskDays` go with everything hanging off them; their `messageId`s
 * (and direct replies) are remembered `messageIdDays`.
 */
export async function sweepOnce(
  db: AgentDB,
  retention: LifecycleLimits["retention"],
  now: number,
  /** Hears the subtasks of the deleted tasks (the agent lets go of them) before any `messageId` is forgotten. */
  onTasksDeleted: (subtaskIds: readonly string[]) => Promise<void>,
): Promise<Swept> {
  // A dead letter keeps its task a day (a test clock's keep locally), so a gatekeeper can still set a config and have it re-delivered.
  const deleted = db.tasks.deleteFinished(now - retention.finishedTaskDays * DAY_MS, RETENTION_BATCH, now - (retention.deadLetterKeepMs ?? DAY_MS));
  await onTasksDeleted(deleted.subtaskIds);
  const forgetBefore = now - retention.messageIdDays * DAY_MS;
  const messages = db.tasks.forgetMessages(forgetBefore, RETENTION_BATCH);
  const replies = db.directReplies.forget(forgetBefore, RETENTION_BATCH);
  // Each kind is its own batch: either one full means more of that kind may wait.
  const more = deleted.tasks === RETENTION_BATCH || messages === RETENTION_BATCH || replies === RETENTION_BATCH;
  return { tasks: deleted.tasks, messageIds: messages + replies, more };
}
