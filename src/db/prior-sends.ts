import { eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { unionAll } from "drizzle-orm/sqlite-core";
import { onFirstUse } from "./on-first-use.js";
import { acceptedMessages, directReplies, erasedMessages } from "./schema.js";

const messageId = sql.placeholder("messageId");

/** What this object did with a `messageId` before: answered it with a message, accepted it into a task, or erased it (only its keyed hash is left). */
export type PriorSend =
  | { kind: "reply"; json: string; fingerprint: string | null }
  | { kind: "accepted"; taskId: string; fingerprint: string | null }
  | { kind: "erased" };

/** Every send asks whether its `messageId` came before: the direct replies, the accepted messages and the erased ones' hashes, in one statement. */
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
      this.db
        .select({ kind: sql<string>`'erased'`.as("kind"), value: erasedMessages.hash, fingerprint: sql<string | null>`null` })
        .from(erasedMessages)
        .where(eq(erasedMessages.hash, sql.placeholder("hash"))),
    ).prepare(),
  );

  /**
   * The record of `messageId` (`hash`: its keyed hash, `ErasureStore.hashOf`;
   * none: an erased one is not looked for);
   * a direct reply first, then a task (a `messageId` has one or the other),
   * then an erased one.
   */
  of(id: string, hash = ""): PriorSend | undefined {
    const rows = this.#prior().all({ messageId: id, hash });
    const row = rows.find((r) => r.kind === "reply") ?? rows.find((r) => r.kind === "accepted") ?? rows[0];
    if (!row) return undefined;
    if (row.kind === "reply") return { kind: "reply", json: row.value, fingerprint: row.fingerprint };
    return row.kind === "accepted" ? { kind: "accepted", taskId: row.value, fingerprint: row.fingerprint } : { kind: "erased" };
  }
}
