import { and, eq } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { toolCalls } from "./schema.js";

export type ToolCallRow = typeof toolCalls.$inferSelect;

/** The tool calls of this caller's turns and their results, as rows. */
export class ToolJournal {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  get(taskId: string, callKey: string): ToolCallRow | undefined {
    return this.db
      .select()
      .from(toolCalls)
      .where(and(eq(toolCalls.taskId, taskId), eq(toolCalls.callKey, callKey)))
      .get();
  }

  /** Records that a call starts; false when it was recorded before (finished, or started and cut off). */
  start(taskId: string, callKey: string, toolName: string): boolean {
    const inserted = this.db
      .insert(toolCalls)
      .values({ taskId, callKey, toolName, status: "started", startedAt: this.now() })
      .onConflictDoNothing()
      .returning({ key: toolCalls.callKey })
      .all();
    return inserted.length > 0;
  }

  finish(taskId: string, callKey: string, output: unknown): void {
    this.db
      .update(toolCalls)
      .set({ status: "finished", outputJson: JSON.stringify(output ?? null), finishedAt: this.now() })
      .where(and(eq(toolCalls.taskId, taskId), eq(toolCalls.callKey, callKey)))
      .run();
  }

  /** A turn's calls, for specs and the dev console. */
  ofTask(taskId: string): ToolCallRow[] {
    return this.db.select().from(toolCalls).where(eq(toolCalls.taskId, taskId)).all();
  }
}
