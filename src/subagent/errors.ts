import type { SubtaskQuestion } from "../boundary/index.js";
import { DynamicAgentsError } from "../errors/index.js";

/** Thrown inside a recipe at a chunk boundary once its subtask was canceled; the run ends `canceled`. */
export class SubtaskCanceled extends DynamicAgentsError {
  static override readonly code: string = "ERR_SUBTASK_CANCELED";
}

/** Thrown inside a recipe by `ask` while its question waits for an answer: the run pauses, unfinished. */
export class SubtaskNeedsInput extends DynamicAgentsError {
  static override readonly code: string = "ERR_SUBTASK_NEEDS_INPUT";
  constructor(readonly question: SubtaskQuestion) {
    super(`the subtask waits for the answer to ${JSON.stringify(question.name)}`);
  }
}
