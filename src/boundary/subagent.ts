import type { Verdict } from "./verdict.js";

/** The caps on a subagent's workspace: the parent agent's `workspace` config. */
export interface WorkspaceCaps {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

/** One subtask, as the parent hands it to the subagent named after it. */
export interface SubtaskSpec {
  subtaskId: string;
  taskId: string;
  type: string;
  params: unknown;
  /** Of (type, params, recipe version): a finished result is valid for exactly this. */
  fingerprint: string;
  /** The parent's caps: a subagent's workspace is bounded as its parent's is. */
  workspace: WorkspaceCaps;
}

export type SubtaskRunResult = { status: "done"; result: unknown } | { status: "failed"; error: string } | { status: "canceled" };

/** A subagent that ran a different subtask (type, params or recipe version changed) refuses to resume it. */
export interface SubagentRefusal {
  code: "ERR_SUBAGENT_FINGERPRINT";
  message: string;
}

/** What the parent calls on a subagent facet. */
export interface SubagentObject {
  /** Runs, resumes after its last finished chunk, or answers from its record. */
  runSubtask(spec: SubtaskSpec): Promise<Verdict<SubtaskRunResult, SubagentRefusal>>;
  /** Asks the running recipe to stop at its next chunk. */
  cancel(): Promise<Verdict<null, never>>;
}
