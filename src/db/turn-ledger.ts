import { asc, count, eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { turns } from "./schema.js";

export type TurnRow = typeof turns.$inferSelect;

/** Bookkeeping of the turns this object handed to Workflows and has not yet seen delivered. */
export class TurnLedger {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {
    const taskId = sql.placeholder("taskId");
    this.#byTask = db.select().from(turns).where(eq(turns.taskId, taskId)).prepare();
    this.#progress = db
      .update(turns)
      .set({ progressAt: sql`${sql.placeholder("at")}`, expectedBy: sql`${sql.placeholder("expectedBy")}` })
      .where(eq(turns.taskId, taskId))
      .prepare();
  }

  // Run on every call a turn makes into the object: built once (drizzle's query building costs more than the write).
  readonly #byTask;
  readonly #progress;

  /** Records a turn once, expected to report within `expectWithinMs`; a second call for the same task keeps the first record. */
  open(taskId: string, instanceId: string, params: unknown, expectWithinMs: number): TurnRow {
    const at = this.now();
    this.db
      .insert(turns)
      .values({ taskId, instanceId, paramsJson: JSON.stringify(params), progressAt: at, expectedBy: at + expectWithinMs, createdAt: at })
      .onConflictDoNothing()
      .run();
    return this.get(taskId)!;
  }

  get(taskId: string): TurnRow | undefined {
    return this.#byTask.get({ taskId });
  }

  all(): TurnRow[] {
    return this.db.select().from(turns).orderBy(asc(turns.progressAt)).all();
  }

  /** The turn reported in, and will again within `expectWithinMs`. */
  progress(taskId: string, expectWithinMs: number): void {
    const at = this.now();
    this.#progress.run({ taskId, at, expectedBy: at + expectWithinMs });
  }

  recordOutcome(taskId: string, outcome: unknown, expectWithinMs: number): void {
    const at = this.now();
    this.db
      .update(turns)
      .set({ outcomeJson: JSON.stringify(outcome), progressAt: at, expectedBy: at + expectWithinMs })
      .where(eq(turns.taskId, taskId))
      .run();
  }

  /** The reconciler re-drove the turn (`instanceId` may be a new, announcing instance); counts as an attempt. */
  redriven(taskId: string, instanceId: string, expectWithinMs: number): void {
    const row = this.get(taskId);
    if (!row) return;
    const at = this.now();
    this.db
      .update(turns)
      .set({ instanceId, attempts: row.attempts + 1, progressAt: at, expectedBy: at + expectWithinMs })
      .where(eq(turns.taskId, taskId))
      .run();
  }

  close(taskId: string): void {
    this.db.delete(turns).where(eq(turns.taskId, taskId)).run();
  }

  get size(): number {
    return this.db.select({ n: count() }).from(turns).get()?.n ?? 0;
  }
}
