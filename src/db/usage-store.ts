import { eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
import { turns, usageDays } from "./schema.js";

/**
 * Tokens one model exchange (or a sum of them) cost. Kept apart, and present
 * only when not zero: the input tokens the provider served from its cache,
 * and the output tokens spent on reasoning (each a part of the total beside it).
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  modelCalls: number;
  cachedInputTokens?: number;
  reasoningTokens?: number;
}

const NONE: Usage = { inputTokens: 0, outputTokens: 0, modelCalls: 0 };

/** What the budgets hold against a usage: its input and output tokens. */
export const tokensOf = (usage: Usage): number => usage.inputTokens + usage.outputTokens;

/** One model exchange's usage, from what it reported. */
export const usageOf = (call: Omit<Usage, "modelCalls">): Usage =>
  withDetails({
    inputTokens: call.inputTokens,
    outputTokens: call.outputTokens,
    modelCalls: 1,
    cachedInputTokens: call.cachedInputTokens,
    reasoningTokens: call.reasoningTokens,
  });

/** A usage as stored, without its cached and reasoning counts where they are 0: most providers report neither. */
export function withDetails(usage: Usage | undefined): Usage {
  if (!usage) return NONE;
  const { cachedInputTokens, reasoningTokens, ...rest } = usage;
  return { ...rest, ...(cachedInputTokens ? { cachedInputTokens } : {}), ...(reasoningTokens ? { reasoningTokens } : {}) };
}

const inputTokens = sql.placeholder("inputTokens");
const outputTokens = sql.placeholder("outputTokens");
const modelCalls = sql.placeholder("modelCalls");
const cachedInputTokens = sql.placeholder("cachedInputTokens");
const reasoningTokens = sql.placeholder("reasoningTokens");

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
      .select({
        inputTokens: turns.inputTokens,
        outputTokens: turns.outputTokens,
        modelCalls: turns.modelCalls,
        cachedInputTokens: turns.cachedInputTokens,
        reasoningTokens: turns.reasoningTokens,
      })
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
        cachedInputTokens: sql`${turns.cachedInputTokens} + ${cachedInputTokens}`,
        reasoningTokens: sql`${turns.reasoningTokens} + ${reasoningTokens}`,
      })
      .where(eq(turns.taskId, sql.placeholder("taskId")))
      .prepare(),
  );
  readonly #addToDay = onFirstUse(() =>
    this.db
      .insert(usageDays)
      .values({ day: sql.placeholder("day"), inputTokens, outputTokens, modelCalls, cachedInputTokens, reasoningTokens })
      .onConflictDoUpdate({
        target: usageDays.day,
        set: {
          inputTokens: sql`${usageDays.inputTokens} + ${inputTokens}`,
          outputTokens: sql`${usageDays.outputTokens} + ${outputTokens}`,
          modelCalls: sql`${usageDays.modelCalls} + ${modelCalls}`,
          cachedInputTokens: sql`${usageDays.cachedInputTokens} + ${cachedInputTokens}`,
          reasoningTokens: sql`${usageDays.reasoningTokens} + ${reasoningTokens}`,
        },
      })
      .prepare(),
  );
  readonly #ofDay = onFirstUse(() =>
    this.db
      .select({
        inputTokens: usageDays.inputTokens,
        outputTokens: usageDays.outputTokens,
        modelCalls: usageDays.modelCalls,
        cachedInputTokens: usageDays.cachedInputTokens,
        reasoningTokens: usageDays.reasoningTokens,
      })
      .from(usageDays)
      .where(eq(usageDays.day, sql.placeholder("day")))
      .prepare(),
  );

  /** Adds one exchange to the task's open turn (if any) and to today's total, together. */
  record(taskId: string | undefined, usage: Usage): void {
    const day = usageDay(this.now());
    const { inputTokens, outputTokens, modelCalls, cachedInputTokens = 0, reasoningTokens = 0 } = usage;
    const added = { inputTokens, outputTokens, modelCalls, cachedInputTokens, reasoningTokens };
    this.db.transaction(() => {
      if (taskId) this.#addToTurn().run({ taskId, ...added });
      this.#addToDay().run({ day, ...added });
    });
  }

  /** What the task's open turn has cost so far. */
  ofTurn(taskId: string): Usage {
    return withDetails(this.#ofTurn().get({ taskId }));
  }

  /** The caller's total for the UTC day of `at` (today by default). */
  ofDay(at: number = this.now()): Usage {
    return withDetails(this.#ofDay().get({ day: usageDay(at) }));
  }
}
