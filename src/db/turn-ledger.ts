import { asc, count, eq } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { turns } from "./schema.js";

export type TurnRow = typeof turns.$inferSelect;

/** Bookkeeping of the turns this object handed to Workflows and has not yet seen delivered. */
export class TurnLedger {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a turn once; a second call for the same task keeps the first record. */
  open(taskId: string, instanceId: string, params: unknown): TurnRow {
    const at = this.now();
    this.db
      .insert(turns)
      .values({ taskId, instanceId, paramsJson: JSON.stringify(params), progressAt: at, createdAt: at })
      .onConflictDoNothing()
      .run();
    return this.get(taskId)!;
  }

  get(taskId: string): TurnRow | undefined {
    return this.db.select().from(turns).where(eq(turns.taskId, taskId)).get();
  }

  all(): TurnRow[] {
    return this.db.select().from(turns).orderBy(asc(turns.progressAt)).all();
  }

  progress(taskId: string): void {
    this.db.update(turns).set({ progressAt: this.now() }).where(eq(turns.taskId, taskId)).run();
  }

  recordOutcome(taskId: string, outcome: unknown): void {
    this.db
      .update(turns)
      .set({ outcomeJson: JSON.stringify(outcome), progressAt: this.now() })
      .where(eq(turns.taskId, taskId))
      .run();
  }

  redriven(taskId: string, instanceId: string): void {
    const row = this.get(taskId);
    if (!row) return;
    this.db
      .update(turns)
      .set({ instanceId, attempts: row.attempts + 1, progressAt: this.now() })
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
