import { eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
import { turns, usageDays } from "./schema.js";

/** Tokens one model exchange (or a sum of them) cost. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  modelCalls: number;
}

const NONE: Usage = { inputTokens: 0, outputTokens: 0, modelCalls: 0 };

/** What the budgets hold against a usage: its input and output tokens. */
export const tokensOf = (usage: Usage): number => usage.inputTokens + usage.outputTokens;

const inputTokens = sql.placeholder("inputTokens");
const outputTokens = sql.placeholder("outputTokens");
const modelCalls = sql.placeholder("modelCalls");

/** A day in milliseconds: the budget's UTC day, retention's days. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day `at` falls on, as `usage_days` keys it. */
export function usageDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** What this caller's model calls cost: per open turn, and per UTC day. */
export class UsageStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  // Run on every model call and read by every turn's end: built once, on first use (drizzle's query building costs more than the query).
  readonly #ofTurn = onFirstUse(() =>
    this.db
      .select({ inputTokens: turns.inputTokens, outputTokens: turns.outputTokens, modelCalls: turns.modelCalls })
      .from(turns)
      .where(eq(turns.taskId, sql.placeholder("taskId")))
      .prepare(),
  );
  readonly #addToTurn = onFirstUse(() =>
    this.db
      .update(turns)
      .set({
        inputTokens: sql`${turns.inputTokens} + ${inputTokens}`,
        outputTokens: sql`${turns.outputTokens} + ${outputTokens}`,
        modelCalls: sql`${turns.modelCalls} + ${modelCalls}`,
      })
      .where(eq(turns.taskId, sql.placeholder("taskId")))
      .prepare(),
  );
  readonly #addToDay = onFirstUse(() =>
    this.db
      .insert(usageDays)
      .values({ day: sql.placeholder("day"), inputTokens, outputTokens, modelCalls })
      .onConflictDoUpdate({
        target: usageDays.day,
        set: {
          inputTokens: sql`${usageDays.inputTokens} + ${inputTokens}`,
          outputTokens: sql`${usageDays.outputTokens} + ${outputTokens}`,
          modelCalls: sql`${usageDays.modelCalls} + ${modelCalls}`,
        },
      })
      .prepare(),
  );
  readonly #ofDay = onFirstUse(() =>
    this.db
      .select({ inputTokens: usageDays.inputTokens, outputTokens: usageDays.outputTokens, modelCalls: usageDays.modelCalls })
      .from(usageDays)
      .where(eq(usageDays.day, sql.placeholder("day")))
      .prepare(),
  );

  /** Adds one exchange to the task's open turn (if any) and to today's total, together. */
  record(taskId: string | undefined, usage: Usage): void {
    const day = usageDay(this.now());
    const { inputTokens, outputTokens, modelCalls } = usage;
    this.db.transaction(() => {
      if (taskId) this.#addToTurn().run({ taskId, inputTokens, outputTokens, modelCalls });
      this.#addToDay().run({ day, inputTokens, outputTokens, modelCalls });
    });
  }

  /** What the task's open turn has cost so far. */
  ofTurn(taskId: string): Usage {
    return this.#ofTurn().get({ taskId }) ?? NONE;
  }

  /** The caller's total for the UTC day of `at` (today by default). */
  ofDay(at: number = this.now()): Usage {
    return this.#ofDay().get({ day: usageDay(at) }) ?? NONE;
  }
}
