import type { StopCondition, ToolSet } from "ai";

/** Stops the tool loop once a turn has spent its token budget. */
export const tokenBudgetSpent =
  (maxTokens: number): StopCondition<ToolSet> =>
  ({ steps }) =>
    steps.reduce((sum, step) => sum + (step.usage.totalTokens ?? 0), 0) >= maxTokens;
