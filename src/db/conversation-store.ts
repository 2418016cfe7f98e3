import { and, asc, desc, eq, gt, inArray, lt, lte, max, min, notExists, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { idSlices } from "./id-slices.js";
import { onFirstUse } from "./on-first-use.js";
import { conversationEntries, conversationState, tasks } from "./schema.js";

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

const conversationId = sql.placeholder("conversationId");
const taskId = sql.placeholder("taskId");
// The committed entries the summary has not folded (`foldedThrough` read first).
const unfolded = and(
  eq(conversationEntries.conversationId, conversationId),
  eq(conversationEntries.committed, 1),
  eq(conversationEntries.kind, "message"),
  gt(conversationEntries.id, sql.placeholder("foldedThrough")),
);

/**
 * The conversations of one caller, as rows. Knows nothing of what a message
 * holds: each is an opaque JSON document with a token estimate.
 */
export class ConversationStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  // Run on every turn (several times each): built once, on first use (drizzle's query building costs more than the query).
  readonly #append = onFirstUse(() =>
    this.db
      .insert(conversationEntries)
      .values({
        conversationId,
        taskId,
        entryKey: sql.placeholder("key"),
        kind: sql.placeholder("kind"),
        messageJson: sql.placeholder("json"),
        tokens: sql.placeholder("tokens"),
        committed: sql.placeholder("committed"),
        createdAt: sql.placeholder("at"),
        // In the same statement: the task's context, for a context's erasure after retention took the task.
        contextId: sql`(select ${tasks.contextId} from ${tasks} where ${tasks.id} = ${taskId})`,
      })
      .onConflictDoNothing()
      .prepare(),
  );
  readonly #has = onFirstUse(() =>
    this.db
      .select({ id: conversationEntries.id })
      .from(conversationEntries)
      .where(eq(conversationEntries.entryKey, sql.placeholder("key")))
      .prepare(),
  );
  readonly #state = onFirstUse(() => this.db.select().from(conversationState).where(eq(conversationState.conversationId, conversationId)).prepare());
  readonly #entry = onFirstUse(() =>
    this.db
      .select()
      .from(conversationEntries)
      .where(eq(conversationEntries.id, sql.placeholder("id")))
      .prepare(),
  );
  readonly #newest = onFirstUse(() =>
    this.db.select().from(conversationEntries).where(unfolded).orderBy(desc(conversationEntries.id)).limit(sql.placeholder("limit")).prepare(),
  );
  readonly #own = onFirstUse(() =>
    this.db
      .select()
      .from(conversationEntries)
      .where(and(eq(conversationEntries.taskId, taskId), eq(conversationEntries.committed, 0)))
      .orderBy(asc(conversationEntries.id))
      .prepare(),
  );
  readonly #commit = onFirstUse(() => this.db.update(conversationEntries).set({ committed: 1 }).where(eq(conversationEntries.taskId, taskId)).prepare());
  readonly #discard = onFirstUse(() =>
    this.db
      .delete(conversationEntries)
      .where(and(eq(conversationEntries.taskId, taskId), eq(conversationEntries.committed, 0)))
      .prepare(),
  );
  // One statement: the summary's `foldedThrough` is read inside it (run after every turn).
  readonly #unfoldedTokens = onFirstUse(() =>
    this.db
      .select({ n: sql<number>`coalesce(sum(${conversationEntries.tokens}), 0)` })
      .from(conversationEntries)
      .where(
        and(
          eq(conversationEntries.conversationId, conversationId),
          eq(conversationEntries.committed, 1),
          eq(conversationEntries.kind, "message"),
          gt(
            conversationEntries.id,
            sql`coalesce((select ${conversationState.foldedThrough} from ${conversationState} where ${conversationState.conversationId} = ${conversationId}), 0)`,
          ),
        ),
      )
      .prepare(),
  );
  readonly #unfolded = onFirstUse(() => this.db.select().from(conversationEntries).where(unfolded).orderBy(asc(conversationEntries.id)).prepare());
  readonly #claim = onFirstUse(() =>
    this.db
      .insert(conversationState)
      .values({ conversationId, compactingUntil: sql.placeholder("until") })
      .onConflictDoUpdate({
        target: conversationState.conversationId,
        set: { compactingUntil: sql`${sql.placeholder("until")}` },
        setWhere: lte(conversationState.compactingUntil, sql.placeholder("at")),
      })
      .returning({ id: conversationState.conversationId })
      .prepare(),
  );
  readonly #release = onFirstUse(() =>
    this.db.update(conversationState).set({ compactingUntil: 0 }).where(eq(conversationState.conversationId, conversationId)).prepare(),
  );

  /** Appends one entry of a turn; idempotent on `key` (a re-run step writes the same keys). */
  append(conversationId: string, taskId: string, key: string, message: unknown, kind: "message" | "summary" = "message"): void {
    const json = JSON.stringify(message);
    this.#append().run({ conversationId, taskId, key, kind, json, tokens: tokensOf(json), committed: kind === "summary" ? 1 : 0, at: this.now() });
  }

  has(key: string): boolean {
    return this.#has().get({ key }) !== undefined;
  }

  /**
   * A turn's window: the latest summary, then the newest `maxEntries`
   * committed entries after what it folded, then the turn's own entries.
   * Bounded reads over an index, however long the conversation grew.
   */
  window(conversationId: string, taskId: string, maxEntries: number): ConversationWindow {
    const state = this.#state().get({ conversationId });
    const summary = state?.summaryEntryId ? this.#entry().get({ id: state.summaryEntryId }) : undefined;
    const committed = this.#newest()
      .all({ conversationId, foldedThrough: state?.foldedThrough ?? 0, limit: maxEntries })
      .reverse();
    return { summary, committed: dropLeadingToolResults(committed), own: this.own(taskId) };
  }

  /** A turn's own, uncommitted entries, oldest first. */
  own(taskId: string): EntryRow[] {
    return this.#own().all({ taskId });
  }

  /** The turn ended: its entries join the conversation every later turn reads. */
  commit(taskId: string): void {
    this.#commit().run({ taskId });
  }

  /** The turn was canceled: nothing of it stays in the conversation. */
  discard(taskId: string): void {
    this.#discard().run({ taskId });
  }

  /** Tokens of the committed entries the summary has not folded yet. */
  unfoldedTokens(conversationId: string): number {
    const row = this.#unfoldedTokens().get({ conversationId });
    return Number(row?.n ?? 0);
  }

  /** Takes the conversation's compaction lease until `until`; false when another compaction holds it. */
  claimCompaction(conversationId: string, until: number): boolean {
    const claimed = this.#claim().all({ conversationId, until, at: this.now() });
    return claimed.length > 0;
  }

  releaseCompaction(conversationId: string): void {
    this.#release().run({ conversationId });
  }

  /**
   * What a compaction folds: the committed, unfolded entries of every turn
   * but the newest ones, which are kept whole while they fit in
   * `keepRecentTokens` (the newest turn is always kept). Whole turns only, so
   * a tool call is never folded apart from its result.
   */
  foldable(conversationId: string, keepRecentTokens: number): EntryRow[] {
    const state = this.#state().get({ conversationId });
    const rows = this.#unfolded().all({ conversationId, foldedThrough: state?.foldedThrough ?? 0 });
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
   * conversation's, the folded entries go, and the lease is released. Nothing
   * when the last folded entry is gone meanwhile (the conversation was
   * erased): a summary of erased words is never written.
   */
  folded(conversationId: string, summary: unknown, through: number): void {
    const json = JSON.stringify(summary);
    this.db.transaction((tx) => {
      if (!tx.select({ id: conversationEntries.id }).from(conversationEntries).where(eq(conversationEntries.id, through)).get()) return;
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
  /**
   * Retention: up to `limit` conversations whose newest entry is older than
   * `before`, and none of whose turns is still open (every entry committed),
   * go whole (their summary and state too); a state row left without entries
   * goes once its lease is over. Returns how many conversations.
   */
  forgetIdle(before: number, limit: number): number {
    const idle = this.db
      .select({ id: conversationEntries.conversationId })
      .from(conversationEntries)
      .groupBy(conversationEntries.conversationId)
      .having(and(lt(max(conversationEntries.createdAt), before), eq(min(conversationEntries.committed), 1)))
      .limit(limit)
      .all()
      .map((row) => row.id);
    for (const slice of idSlices(idle)) {
      this.db.delete(conversationEntries).where(inArray(conversationEntries.conversationId, slice)).run();
      this.db.delete(conversationState).where(inArray(conversationState.conversationId, slice)).run();
    }
    const entries = this.db.select().from(conversationEntries).where(eq(conversationEntries.conversationId, conversationState.conversationId));
    this.db
      .delete(conversationState)
      .where(and(notExists(entries), lt(conversationState.compactingUntil, this.now())))
      .run();
    return idle.length;
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
