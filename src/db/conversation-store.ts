import { and, asc, desc, eq, gt, lte, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { conversationEntries, conversationState } from "./schema.js";

export type EntryRow = typeof conversationEntries.$inferSelect;

/** What a turn's model request is built from: the summary, the conversation's committed tail, and the turn's own entries. */
export interface ConversationWindow {
  summary?: EntryRow;
  /** Committed entries after what the summary folded, oldest first (at most the window's size). */
  committed: EntryRow[];
  /** This turn's own, not yet committed, entries, oldest first. */
  own: EntryRow[];
}

/** A rough token count: the model's tokens are about four bytes of JSON each. */
const tokensOf = (json: string) => Math.ceil(json.length / 4);

/**
 * The conversations of one caller, as rows. Knows nothing of what a message
 * holds: each is an opaque JSON document with a token estimate.
 */
export class ConversationStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** Appends one entry of a turn; idempotent on `key` (a re-run step writes the same keys). */
  append(conversationId: string, taskId: string, key: string, message: unknown, kind: "message" | "summary" = "message"): void {
    const json = JSON.stringify(message);
    this.db
      .insert(conversationEntries)
      .values({
        conversationId,
        taskId,
        entryKey: key,
        kind,
        messageJson: json,
        tokens: tokensOf(json),
        committed: kind === "summary" ? 1 : 0,
        createdAt: this.now(),
      })
      .onConflictDoNothing()
      .run();
  }

  has(key: string): boolean {
    return this.db.select({ id: conversationEntries.id }).from(conversationEntries).where(eq(conversationEntries.entryKey, key)).get() !== undefined;
  }

  /**
   * A turn's window: the latest summary, then the newest `maxEntries`
   * committed entries after what it folded, then the turn's own entries.
   * Bounded reads over an index, however long the conversation grew.
   */
  window(conversationId: string, taskId: string, maxEntries: number): ConversationWindow {
    const state = this.db.select().from(conversationState).where(eq(conversationState.conversationId, conversationId)).get();
    const summary = state?.summaryEntryId
      ? this.db.select().from(conversationEntries).where(eq(conversationEntries.id, state.summaryEntryId)).get()
      : undefined;
    const committed = this.db
      .select()
      .from(conversationEntries)
      .where(
        and(
          eq(conversationEntries.conversationId, conversationId),
          eq(conversationEntries.committed, 1),
          eq(conversationEntries.kind, "message"),
          gt(conversationEntries.id, state?.foldedThrough ?? 0),
        ),
      )
      .orderBy(desc(conversationEntries.id))
      .limit(maxEntries)
      .all()
      .reverse();
    return { summary, committed: dropLeadingToolResults(committed), own: this.own(taskId) };
  }

  /** A turn's own, uncommitted entries, oldest first. */
  own(taskId: string): EntryRow[] {
    return this.db
      .select()
      .from(conversationEntries)
      .where(and(eq(conversationEntries.taskId, taskId), eq(conversationEntries.committed, 0)))
      .orderBy(asc(conversationEntries.id))
      .all();
  }

  /** The turn ended: its entries join the conversation every later turn reads. */
  commit(taskId: string): void {
    this.db.update(conversationEntries).set({ committed: 1 }).where(eq(conversationEntries.taskId, taskId)).run();
  }

  /** The turn was canceled: nothing of it stays in the conversation. */
  discard(taskId: string): void {
    this.db
      .delete(conversationEntries)
      .where(and(eq(conversationEntries.taskId, taskId), eq(conversationEntries.committed, 0)))
      .run();
  }

  /** Tokens of the committed entries the summary has not folded yet. */
  unfoldedTokens(conversationId: string): number {
    const state = this.db.select().from(conversationState).where(eq(conversationState.conversationId, conversationId)).get();
    const row = this.db
      .select({ n: sql<number>`coalesce(sum(${conversationEntries.tokens}), 0)` })
      .from(conversationEntries)
      .where(
        and(
          eq(conversationEntries.conversationId, conversationId),
          eq(conversationEntries.committed, 1),
          eq(conversationEntries.kind, "message"),
          gt(conversationEntries.id, state?.foldedThrough ?? 0),
        ),
      )
      .get();
    return Number(row?.n ?? 0);
  }

  /** Takes the conversation's compaction lease until `until`; false when another compaction holds it. */
  claimCompaction(conversationId: string, until: number): boolean {
    const at = this.now();
    const claimed = this.db
      .insert(conversationState)
      .values({ conversationId, compactingUntil: until })
      .onConflictDoUpdate({ target: conversationState.conversationId, set: { compactingUntil: until }, setWhere: lte(conversationState.compactingUntil, at) })
      .returning({ id: conversationState.conversationId })
      .all();
    return claimed.length > 0;
  }

  releaseCompaction(conversationId: string): void {
    this.db.update(conversationState).set({ compactingUntil: 0 }).where(eq(conversationState.conversationId, conversationId)).run();
  }

  /**
   * What a compaction folds: the committed, unfolded entries of every turn
   * but the newest ones, which are kept whole while they fit in
   * `keepRecentTokens` (the newest turn is always kept). Whole turns only, so
   * a tool call is never folded apart from its result.
   */
  foldable(conversationId: string, keepRecentTokens: number): EntryRow[] {
    const state = this.db.select().from(conversationState).where(eq(conversationState.conversationId, conversationId)).get();
    const rows = this.db
      .select()
      .from(conversationEntries)
      .where(
        and(
          eq(conversationEntries.conversationId, conversationId),
          eq(conversationEntries.committed, 1),
          eq(conversationEntries.kind, "message"),
          gt(conversationEntries.id, state?.foldedThrough ?? 0),
        ),
      )
      .orderBy(asc(conversationEntries.id))
      .all();
    const turns: EntryRow[][] = [];
    for (const row of rows) {
      const last = turns.at(-1);
      if (last && last[0]!.taskId === row.taskId) last.push(row);
      else turns.push([row]);
    }
    let kept = 0;
    let cut = turns.length;
    while (cut > 1) {
      const tokens = turns[cut - 1]!.reduce((sum, row) => sum + row.tokens, 0);
      if (cut < turns.length && kept + tokens > keepRecentTokens) break;
      kept += tokens;
      cut--;
    }
    return turns.slice(0, cut).flat();
  }

  /**
   * Replaces the folded entries by their summary: the summary becomes the
   * conversation's, the folded entries go, and the lease is released.
   */
  folded(conversationId: string, summary: unknown, through: number): void {
    const json = JSON.stringify(summary);
    this.db.transaction((tx) => {
      const inserted = tx
        .insert(conversationEntries)
        .values({
          conversationId,
          taskId: "",
          entryKey: `${conversationId}:summary:${through}`,
          kind: "summary",
          messageJson: json,
          tokens: tokensOf(json),
          committed: 1,
          createdAt: this.now(),
        })
        .onConflictDoNothing()
        .returning({ id: conversationEntries.id })
        .get();
      const previous = tx.select().from(conversationState).where(eq(conversationState.conversationId, conversationId)).get()?.summaryEntryId;
      if (inserted) {
        tx.update(conversationState)
          .set({ summaryEntryId: inserted.id, foldedThrough: through, compactingUntil: 0 })
          .where(eq(conversationState.conversationId, conversationId))
          .run();
      }
      // By a condition, not a list of ids: a compaction folds hundreds of entries.
      tx.delete(conversationEntries)
        .where(and(eq(conversationEntries.conversationId, conversationId), eq(conversationEntries.kind, "message"), lte(conversationEntries.id, through)))
        .run();
      if (previous && inserted) tx.delete(conversationEntries).where(eq(conversationEntries.id, previous)).run();
    });
  }
}

/**
 * A window cut by its size may start in the middle of a turn; a tool result
 * whose call was cut off would be refused by the model, so it goes too.
 */
function dropLeadingToolResults(rows: EntryRow[]): EntryRow[] {
  let start = 0;
  while (start < rows.length && rows[start]!.messageJson.startsWith('{"role":"tool"')) start++;
  return start === 0 ? rows : rows.slice(start);
}
