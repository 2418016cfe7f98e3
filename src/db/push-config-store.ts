import { and, asc, count, eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { pushConfigs } from "./schema.js";

export type PushConfigRow = typeof pushConfigs.$inferSelect;

export type PutVerdict = { kind: "stored" } | { kind: "full"; held: number };

/** The push configs of this caller's tasks, as documents keyed by (task, config id). */
export class PushConfigStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {
    this.#ofTask = db
      .select()
      .from(pushConfigs)
      .where(eq(pushConfigs.taskId, sql.placeholder("taskId")))
      .orderBy(asc(pushConfigs.createdAt), asc(pushConfigs.id))
      .prepare();
  }

  /** Read by every turn's push: built once (drizzle's query building costs more than the read). */
  readonly #ofTask;

  /**
   * Adds, or replaces by id, a config of an existing task. A new id beyond
   * `max` configs is refused. No `await` from the count to the write, so the
   * object's input gate keeps them together.
   */
  put(taskId: string, id: string, json: string, max: number): PutVerdict {
    if (!this.get(taskId, id)) {
      const held = this.db.select({ n: count() }).from(pushConfigs).where(eq(pushConfigs.taskId, taskId)).get()?.n ?? 0;
      if (held >= max) return { kind: "full", held };
    }
    this.db
      .insert(pushConfigs)
      .values({ taskId, id, configJson: json, createdAt: this.now() })
      .onConflictDoUpdate({ target: [pushConfigs.taskId, pushConfigs.id], set: { configJson: json } })
      .run();
    return { kind: "stored" };
  }

  get(taskId: string, id: string): PushConfigRow | undefined {
    return this.db
      .select()
      .from(pushConfigs)
      .where(and(eq(pushConfigs.taskId, taskId), eq(pushConfigs.id, id)))
      .get();
  }

  /** Idempotent: deleting a config that is not there is fine. */
  delete(taskId: string, id: string): void {
    this.db
      .delete(pushConfigs)
      .where(and(eq(pushConfigs.taskId, taskId), eq(pushConfigs.id, id)))
      .run();
  }

  /** Every config of a task, oldest first. */
  all(taskId: string): PushConfigRow[] {
    return this.#ofTask.all({ taskId });
  }
}
