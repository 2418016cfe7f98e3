import { and, asc, count, eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
import { redeliveries, tasks, turns } from "./schema.js";
import type { TaskRow } from "./task-store.js";
import { withDetails, type Usage } from "./usage-store.js";

export type TurnRow = typeof turns.$inferSelect;

const taskId = sql.placeholder("taskId");

/** Bookkeeping of the turns this object handed to Workflows and has not yet seen delivered. */
export class TurnLedger {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  // Run on every call a turn makes into the object: built once, on first use (drizzle's query building costs more than the write).
  readonly #byTask = onFirstUse(() => this.db.select().from(turns).where(eq(turns.taskId, taskId)).prepare());
  readonly #progress = onFirstUse(() =>
    this.db
      .update(turns)
      .set({ progressAt: sql`${sql.placeholder("at")}`, expectedBy: sql`${sql.placeholder("expectedBy")}` })
      .where(eq(turns.taskId, taskId))
      .prepare(),
  );
  readonly #open = onFirstUse(() =>
    this.db
      .insert(turns)
      .values({
        taskId,
        instanceId: sql.placeholder("instanceId"),
        paramsJson: sql.placeholder("paramsJson"),
        progressAt: sql.placeholder("at"),
        expectedBy: sql.placeholder("expectedBy"),
        createdAt: sql.placeholder("at"),
      })
      .onConflictDoNothing()
      .returning()
      .prepare(),
  );
  readonly #outcome = onFirstUse(() =>
    this.db
      .update(turns)
      .set({
        outcomeJson: sql`${sql.placeholder("outcomeJson")}`,
        progressAt: sql`${sql.placeholder("at")}`,
        expectedBy: sql`${sql.placeholder("expectedBy")}`,
      })
      .where(eq(turns.taskId, taskId))
      .returning({
        inputTokens: turns.inputTokens,
        outputTokens: turns.outputTokens,
        modelCalls: turns.modelCalls,
        cachedInputTokens: turns.cachedInputTokens,
        reasoningTokens: turns.reasoningTokens,
      })
      .prepare(),
  );
  readonly #redriven = onFirstUse(() =>
    this.db
      .update(turns)
      .set({
        instanceId: sql`${sql.placeholder("instanceId")}`,
        attempts: sql`${turns.attempts} + 1`,
        progressAt: sql`${sql.placeholder("at")}`,
        expectedBy: sql`${sql.placeholder("expectedBy")}`,
      })
      // The record the reconciler read, still: not one a re-delivery opened for the task since (the pass awaits in between).
      .where(and(eq(turns.taskId, taskId), eq(turns.instanceId, sql.placeholder("from"))))
      .prepare(),
  );
  // One statement: the record goes, and says whether re-deliveries wait for its task (they start as it closes).
  // Only the instance's own: a replayed close must not take a re-delivery's record, opened since for the same task.
  readonly #close = onFirstUse(() =>
    this.db
      .delete(turns)
      .where(and(eq(turns.taskId, taskId), eq(turns.instanceId, sql.placeholder("instanceId"))))
      .returning({
        paramsJson: turns.paramsJson,
        // Against the placeholder, not turns.task_id: drizzle renders both columns unqualified in RETURNING.
        redeliveries: sql<number>`exists (select 1 from ${redeliveries} where ${redeliveries.taskId} = ${taskId})`,
      })
      .prepare(),
  );
  readonly #withTask = onFirstUse(() =>
    this.db.select({ task: tasks, turn: turns }).from(tasks).leftJoin(turns, eq(turns.taskId, tasks.id)).where(eq(tasks.id, taskId)).prepare(),
  );
  readonly #all = onFirstUse(() => this.db.select().from(turns).orderBy(asc(turns.progressAt)).prepare());
  readonly #size = onFirstUse(() => this.db.select({ n: count() }).from(turns).prepare());
  readonly #byState = onFirstUse(() =>
    this.db.select({ state: tasks.state, n: count() }).from(turns).innerJoin(tasks, eq(tasks.id, turns.taskId)).groupBy(tasks.state).prepare(),
  );

  /** Records a turn once, expected to report within `expectWithinMs`; a second call for the same task keeps the first record. */
  open(taskId: string, instanceId: string, params: unknown, expectWithinMs: number): TurnRow {
    const at = this.now();
    // Inserted, the statement returns the row; an existing record is read instead.
    return this.#open().get({ taskId, instanceId, paramsJson: JSON.stringify(params), at, expectedBy: at + expectWithinMs }) ?? this.get(taskId)!;
  }

  /** A task and its turn's record, in one read (a turn's start reads both); `undefined` for no such task. */
  withTask(taskId: string): { task: TaskRow; turn: TurnRow | undefined } | undefined {
    const found = this.#withTask().get({ taskId });
    return found && { task: found.task, turn: found.turn ?? undefined };
  }

  get(taskId: string): TurnRow | undefined {
    return this.#byTask().get({ taskId });
  }

  all(): TurnRow[] {
    return this.#all().all();
  }

  /** The turn reported in, and will again within `expectWithinMs`. */
  progress(taskId: string, expectWithinMs: number): void {
    const at = this.now();
    this.#progress().run({ taskId, at, expectedBy: at + expectWithinMs });
  }

  /** Records the turn's outcome; returns what the turn has cost so far (`undefined`: no turn record). */
  recordOutcome(taskId: string, outcome: unknown, expectWithinMs: number): Usage | undefined {
    const at = this.now();
    const usage = this.#outcome().get({ taskId, outcomeJson: JSON.stringify(outcome), at, expectedBy: at + expectWithinMs });
    return usage && withDetails(usage);
  }

  /**
   * The reconciler re-drove instance `from`'s turn as `instanceId` (the same, or a new, announcing instance);
   * counts as an attempt. A record of another instance is left as it is.
   */
  redriven(taskId: string, from: string, instanceId: string, expectWithinMs: number): void {
    const at = this.now();
    this.#redriven().run({ taskId, from, instanceId, at, expectedBy: at + expectWithinMs });
  }

  /**
   * Deletes the turn's record if it is instance `instanceId`'s; what it was started with, when re-deliveries wait
   * for its task (`undefined`: none wait, or no such record).
   */
  close(taskId: string, instanceId: string): string | undefined {
    const closed = this.#close().get({ taskId, instanceId });
    return closed?.redeliveries ? closed.paramsJson : undefined;
  }

  get size(): number {
    return this.#size().get()?.n ?? 0;
  }

  /** The open turns counted by the state of their task, in one statement (the accept's caps read it). */
  byTaskState(): { state: string; n: number }[] {
    return this.#byState().all();
  }
}
