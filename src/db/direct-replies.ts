import { asc, eq, inArray, lt, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { idSlices } from "./id-slices.js";
import { onFirstUse } from "./on-first-use.js";
import { directReplies } from "./schema.js";

const messageId = sql.placeholder("messageId");

/** Sends answered with a message instead of a task, by `messageId`: a retry gets the same message. */
export class DirectReplyStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  // Built once, on first use (drizzle's query building costs more than the read); every send's lookup is PriorSends'.
  readonly #reply = onFirstUse(() =>
    this.db.select({ json: directReplies.replyJson }).from(directReplies).where(eq(directReplies.messageId, messageId)).prepare(),
  );
  readonly #put = onFirstUse(() =>
    this.db
      .insert(directReplies)
      .values({ messageId, replyJson: sql.placeholder("json"), createdAt: sql.placeholder("at"), fingerprint: sql.placeholder("fingerprint") })
      .onConflictDoNothing()
      .prepare(),
  );

  /** The reply recorded for `messageId`, as stored. */
  get(messageId: string): string | undefined {
    return this.#reply().get({ messageId })?.json;
  }

  /** Records a reply; the first one for a `messageId` stands, and is returned. */
  put(messageId: string, json: string, fingerprint?: string): string {
    this.#put().run({ messageId, json, at: this.now(), fingerprint: fingerprint ?? null });
    return this.get(messageId) ?? json;
  }

  /** Retention: forgets up to `limit` replies older than `before`. Returns how many. */
  forget(before: number, limit: number): number {
    const ids = this.db
      .select({ id: directReplies.messageId })
      .from(directReplies)
      .where(lt(directReplies.createdAt, before))
      .orderBy(asc(directReplies.createdAt))
      .limit(limit)
      .all()
      .map((row) => row.id);
    for (const slice of idSlices(ids)) this.db.delete(directReplies).where(inArray(directReplies.messageId, slice)).run();
    return ids.length;
  }
}
