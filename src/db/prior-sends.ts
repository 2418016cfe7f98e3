import { eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { unionAll } from "drizzle-orm/sqlite-core";
import { onFirstUse } from "./on-first-use.js";
import { acceptedMessages, directReplies } from "./schema.js";

const messageId = sql.placeholder("messageId");

/** What this object did with a `messageId` before: answered it with a message, or accepted it into a task. */
export type PriorSend = { kind: "reply"; json: string; fingerprint: string | null } | { kind: "accepted"; taskId: string; fingerprint: string | null };

/** Every send asks whether its `messageId` came before: the direct replies and the accepted messages, in one statement. */
export class PriorSends {
  constructor(private readonly db: DrizzleSqliteDODatabase) {}

  readonly #prior = onFirstUse(() =>
    unionAll(
      this.db
        .select({ kind: sql<string>`'reply'`.as("kind"), value: directReplies.replyJson, fingerprint: directReplies.fingerprint })
        .from(directReplies)
        .where(eq(directReplies.messageId, messageId)),
      this.db
        .select({ kind: sql<string>`'accepted'`.as("kind"), value: acceptedMessages.taskId, fingerprint: acceptedMessages.fingerprint })
        .from(acceptedMessages)
        .where(eq(acceptedMessages.messageId, messageId)),
    ).prepare(),
  );

  /** The record of `messageId`; a direct reply first (a `messageId` has one or the other). */
  of(id: string): PriorSend | undefined {
    const rows = this.#prior().all({ messageId: id });
    const row = rows.find((r) => r.kind === "reply") ?? rows[0];
    if (!row) return undefined;
    return row.kind === "reply"
      ? { kind: "reply", json: row.value, fingerprint: row.fingerprint }
      : { kind: "accepted", taskId: row.value, fingerprint: row.fingerprint };
  }
}
