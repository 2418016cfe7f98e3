import { and, eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
import { toolCalls } from "./schema.js";

export type ToolCallRow = typeof toolCalls.$inferSelect;

const taskId = sql.placeholder("taskId");
const callKey = sql.placeholder("callKey");

/** The tool calls of this caller's turns and their results, as rows. */
export class ToolJournal {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  // Run on every tool call: built once, on first use (drizzle's query building costs more than the query).
  readonly #get = onFirstUse(() =>
    this.db
      .select()
      .from(toolCalls)
      .where(and(eq(toolCalls.taskId, taskId), eq(toolCalls.callKey, callKey)))
      .prepare(),
  );
  readonly #start = onFirstUse(() =>
    this.db
      .insert(toolCalls)
      .values({ taskId, callKey, toolName: sql.placeholder("toolName"), status: "started", startedAt: sql.placeholder("at") })
      .onConflictDoNothing()
      .returning({ key: toolCalls.callKey })
      .prepare(),
  );
  readonly #finish = onFirstUse(() =>
    this.db
      .update(toolCalls)
      .set({ status: "finished", outputJson: sql`${sql.placeholder("outputJson")}`, finishedAt: sql`${sql.placeholder("at")}` })
      .where(and(eq(toolCalls.taskId, taskId), eq(toolCalls.callKey, callKey)))
      .prepare(),
  );

  get(taskId: string, callKey: string): ToolCallRow | undefined {
    return this.#get().get({ taskId, callKey });
  }

  /** Records that a call starts; false when it was recorded before (finished, or started and cut off). */
  start(taskId: string, callKey: string, toolName: string): boolean {
    const inserted = this.#start().all({ taskId, callKey, toolName, at: this.now() });
    return inserted.length > 0;
  }

  finish(taskId: string, callKey: string, output: unknown): void {
    this.#finish().run({ taskId, callKey, outputJson: JSON.stringify(output ?? null), at: this.now() });
  }

  /** A turn's calls, for specs and the dev console. */
  ofTask(taskId: string): ToolCallRow[] {
    return this.db.select().from(toolCalls).where(eq(toolCalls.taskId, taskId)).all();
  }
}
