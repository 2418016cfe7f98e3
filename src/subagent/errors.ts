import { DynamicAgentsError } from "../errors/index.js";

/** Thrown inside a recipe at a chunk boundary once its subtask was canceled; the run ends `canceled`. */
export class SubtaskCanceled extends DynamicAgentsError {
  static override readonly code: string = "ERR_SUBTASK_CANCELED";
}
