import type { AgentDB } from "./agent-db.js";
import { DAY_MS } from "./usage-store.js";

/** How long what a caller leaves behind is kept (the agent's `retention` config; docs/retention.md). */
export interface RetentionRules {
  finishedTaskDays: number;
  messageIdDays: number;
  conversationIdleDays: number;
  /** How long a dead letter keeps its finished task (a day unless a test clock says otherwise). */
  deadLetterKeepMs?: number;
}

/** Retention deletes at most this many rows of a kind per pass, then comes back at once for more. */
const RETENTION_BATCH = 200;

/** What one retention pass removed; `more`: a batch came back full, so another pass follows at once. */
export interface Swept {
  tasks: number;
  messageIds: number;
  conversations: number;
  more: boolean;
}

/**
 * One bounded retention pass: finished, delivered tasks past
 * `finishedTaskDays` go with everything hanging off them; their `messageId`s
 * (direct replies, and erased ones' hashes) are remembered `messageIdDays`;
 * a conversation idle `conversationIdleDays` goes whole.
 */
export async function sweepOnce(
  db: AgentDB,
  retention: RetentionRules,
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
  const hashes = db.erasures.forgetHashes(forgetBefore, RETENTION_BATCH);
  const conversations = db.conversations.forgetIdle(now - retention.conversationIdleDays * DAY_MS, RETENTION_BATCH);
  // Each kind is its own batch: any one full means more of that kind may wait.
  const more = [deleted.tasks, messages, replies, hashes, conversations].some((n) => n === RETENTION_BATCH);
  return { tasks: deleted.tasks, messageIds: messages + replies + hashes, conversations, more };
}
