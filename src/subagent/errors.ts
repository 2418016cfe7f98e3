import type { SubtaskQuestion } from "../boundary/index.js";
import { DynamicAgentsError } from "../errors/index.js";

/** Every code the subagent area's errors carry: one closed union, so `switch (error.code)` over them is checked by the compiler. */
export type SubagentErrorCode = "ERR_SUBTASK_CANCELED" | "ERR_SUBTASK_NEEDS_INPUT" | "ERR_SUBTASK_OVER_BUDGET";

/** Thrown inside a recipe at a chunk boundary once its subtask was canceled; the run ends `canceled`. */
export class SubtaskCanceled extends DynamicAgentsError {
  static override readonly code = "ERR_SUBTASK_CANCELED";
  declare readonly code: "ERR_SUBTASK_CANCELED";
}

/** Thrown inside a recipe by `ask` while its question waits for an answer: the run pauses, unfinished. */
export class SubtaskNeedsInput extends DynamicAgentsError {
  static override readonly code = "ERR_SUBTASK_NEEDS_INPUT";
  declare readonly code: "ERR_SUBTASK_NEEDS_INPUT";
  constructor(readonly question: SubtaskQuestion) {
    super(`the subtask waits for the answer to ${JSON.stringify(question.name)}`);
  }
}

/**
 * Thrown by `RecipeContext.generate`, making no request, once the subtask's
 * calls have spent what its budget left them (`SubtaskBudget`): the run ends
 * `failed` with its message, unless the recipe catches it.
 */
export class SubtaskOverBudget extends DynamicAgentsError {
  static override readonly code = "ERR_SUBTASK_OVER_BUDGET";
  declare readonly code: "ERR_SUBTASK_OVER_BUDGET";
}
