import { and, asc, count, eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
import { pushConfigs } from "./schema.js";

export type PushConfigRow = typeof pushConfigs.$inferSelect;

export type PutVerdict = { kind: "stored" } | { kind: "full"; held: number };

const taskId = sql.placeholder("taskId");
const id = sql.placeholder("id");

/** The push configs of this caller's tasks, as documents keyed by (task, config id). */
export class PushConfigStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** Read by every turn's push: built once, on first use (drizzle's query building costs more than the read). */
  readonly #ofTask = onFirstUse(() =>
    this.db.select().from(pushConfigs).where(eq(pushConfigs.taskId, taskId)).orderBy(asc(pushConfigs.createdAt), asc(pushConfigs.id)).prepare(),
  );
  readonly #get = onFirstUse(() =>
    this.db
      .select()
      .from(pushConfigs)
      .where(and(eq(pushConfigs.taskId, taskId), eq(pushConfigs.id, id)))
      .prepare(),
  );
  readonly #held = onFirstUse(() => this.db.select({ n: count() }).from(pushConfigs).where(eq(pushConfigs.taskId, taskId)).prepare());
  readonly #put = onFirstUse(() =>
    this.db
      .insert(pushConfigs)
      .values({ taskId, id, configJson: sql.placeholder("json"), createdAt: sql.placeholder("at"), progress: sql.placeholder("progress") })
      .onConflictDoUpdate({
        target: [pushConfigs.taskId, pushConfigs.id],
        set: { configJson: sql`${sql.placeholder("json")}`, progress: sql`${sql.placeholder("progress")}` },
      })
      .prepare(),
  );
  readonly #delete = onFirstUse(() =>
    this.db
      .delete(pushConfigs)
      .where(and(eq(pushConfigs.taskId, taskId), eq(pushConfigs.id, id)))
      .prepare(),
  );

  /**
   * Adds, or replaces by id, a config of an existing task. A new id beyond
   * `max` configs is refused. No `await` from the count to the write, so the
   * object's input gate keeps them together. `progress`: the request that set
   * it activated progress (a replacement says anew).
   */
  put(taskId: string, id: string, json: string, max: number, progress = false): PutVerdict {
    if (!this.get(taskId, id)) {
      const held = this.#held().get({ taskId })?.n ?? 0;
      if (held >= max) return { kind: "full", held };
    }
    this.#put().run({ taskId, id, json, at: this.now(), progress: progress ? 1 : 0 });
    return { kind: "stored" };
  }

  get(taskId: string, id: string): PushConfigRow | undefined {
    return this.#get().get({ taskId, id });
  }

  /** Idempotent: deleting a config that is not there is fine. */
  delete(taskId: string, id: string): void {
    this.#delete().run({ taskId, id });
  }

  /** Every config of a task, oldest first. */
  all(taskId: string): PushConfigRow[] {
    return this.#ofTask().all({ taskId });
  }
}
