import { and, asc, eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
import { redeliveries } from "./schema.js";

export interface Redelivery {
  configId: string;
  /** The dead-lettered events to send it, in order. */
  seqs: number[];
}

const taskId = sql.placeholder("taskId");

/** Push configs waiting to be sent a task's dead-lettered events once. */
export class RedeliveryQueue {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  // Read by every turn's push: built once, on first use (drizzle's query building costs more than the read).
  readonly #of = onFirstUse(() =>
    this.db.select().from(redeliveries).where(eq(redeliveries.taskId, taskId)).orderBy(asc(redeliveries.createdAt), asc(redeliveries.configId)).prepare(),
  );
  readonly #add = onFirstUse(() =>
    this.db
      .insert(redeliveries)
      .values({ taskId, configId: sql.placeholder("configId"), seqsJson: sql.placeholder("seqsJson"), createdAt: sql.placeholder("at") })
      .onConflictDoUpdate({ target: [redeliveries.taskId, redeliveries.configId], set: { seqsJson: sql`${sql.placeholder("seqsJson")}` } })
      .prepare(),
  );
  readonly #done = onFirstUse(() =>
    this.db
      .delete(redeliveries)
      .where(and(eq(redeliveries.taskId, taskId), eq(redeliveries.configId, sql.placeholder("configId"))))
      .prepare(),
  );

  /** Queues `seqs` for a config; a config queued already gets the new list. */
  add(taskId: string, configId: string, seqs: readonly number[]): void {
    const seqsJson = JSON.stringify([...seqs].sort((a, b) => a - b));
    this.#add().run({ taskId, configId, seqsJson, at: this.now() });
  }

  /** What is queued for a task, oldest first. */
  of(taskId: string): Redelivery[] {
    return this.#of()
      .all({ taskId })
      .map((row) => ({ configId: row.configId, seqs: JSON.parse(row.seqsJson) as number[] }));
  }

  /** The config was sent its events (or given up on): no longer queued. */
  done(taskId: string, configId: string): void {
    this.#done().run({ taskId, configId });
  }
}
