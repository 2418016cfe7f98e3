import { and, asc, eq } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { redeliveries } from "./schema.js";

export interface Redelivery {
  configId: string;
  /** The dead-lettered events to send it, in order. */
  seqs: number[];
}

/** Push configs waiting to be sent a task's dead-lettered events once. */
export class RedeliveryQueue {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** Queues `seqs` for a config; a config queued already gets the new list. */
  add(taskId: string, configId: string, seqs: readonly number[]): void {
    const seqsJson = JSON.stringify([...seqs].sort((a, b) => a - b));
    this.db
      .insert(redeliveries)
      .values({ taskId, configId, seqsJson, createdAt: this.now() })
      .onConflictDoUpdate({ target: [redeliveries.taskId, redeliveries.configId], set: { seqsJson } })
      .run();
  }

  /** What is queued for a task, oldest first. */
  of(taskId: string): Redelivery[] {
    return this.db
      .select()
      .from(redeliveries)
      .where(eq(redeliveries.taskId, taskId))
      .orderBy(asc(redeliveries.createdAt), asc(redeliveries.configId))
      .all()
      .map((row) => ({ configId: row.configId, seqs: JSON.parse(row.seqsJson) as number[] }));
  }

  /** The config was sent its events (or given up on): no longer queued. */
  done(taskId: string, configId: string): void {
    this.db
      .delete(redeliveries)
      .where(and(eq(redeliveries.taskId, taskId), eq(redeliveries.configId, configId)))
      .run();
  }
}
