import type { TraceContext } from "../a2a/trace-context.js";
import type { Verdict } from "./verdict.js";

/** The caps on a subagent's workspace: the parent agent's `workspace` config. */
export interface WorkspaceCaps {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

/**
 * The tokens (input + output) a subtask's model calls may still spend: what
 * is left of the parent's turn budget (`turn.maxTokensPerTurn`) or, when
 * less, of the caller's daily budget (`limits.tokensPerCallerPerDay`), as the
 * parent counted before this run. Its calls past the first `counted` (those
 * the parent has not counted yet) are held against it: once they spent it, a
 * call is refused and the subtask fails.
 */
export interface SubtaskBudget {
  tokens: number;
  /** How many of the subtask's calls (in order, over all its runs) the parent has counted already. */
  counted: number;
  /** Which budget is the nearer one, named as the agent's config names it. */
  limit: "turn.maxTokensPerTurn" | "limits.tokensPerCallerPerDay";
}

/** One model call a subtask's recipe made (`RecipeContext.generate`), as its subagent recorded it once it ended. */
export interface SubtaskModelCall {
  model: string;
  /** Whether a fallback model answered (or was tried last). */
  fallback: boolean;
  /** Model requests past the first that the call needed (retries, the fallback's). */
  retries: number;
  outcome: "ok" | "error" | "aborted";
  steps: number;
  inputTokens: number;
  outputTokens: number;
  durationMs: number;
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
  /** What the subtask's model calls may still spend; absent, nothing holds them back (a run outside any turn). */
  budget?: SubtaskBudget;
  /** The parent turn's trace: the recipe's model requests are spans of it (docs/telemetry.md "Trace context"). */
  trace?: Pick<TraceContext, "traceId" | "flags">;
}

/** A question a subtask's recipe asks the human behind the parent's task (`RecipeContext.ask`). */
export interface SubtaskQuestion {
  /** The recipe's own name for the question: its answer is recorded under it. */
  name: string;
  question: string;
  choices?: Array<{ id: string; label: string }>;
  /** With choices: whether the human may answer in their own words instead. */
  allowFreeform?: boolean;
}

/** What the human answered, as the recipe receives it; an unanswered question expired (or the task ended). */
export type HumanAnswer = { answered: true; optionId?: string; label?: string; text?: string } | { answered: false; reason: "expired" | "canceled" };

/** Where a run of a subtask ended. */
export type SubtaskOutcome =
  | { status: "done"; result: unknown }
  | { status: "failed"; error: string }
  | { status: "canceled" }
  /** The recipe asked a question and waits: the parent parks its task on it, and runs the subtask again with the answer. */
  | { status: "input-required"; question: SubtaskQuestion };

export type SubtaskRunResult = SubtaskOutcome & {
  /**
   * Every model call of the subtask so far, in order, over all its runs (a
   * run answered from the record lists them again): the parent counts, in the
   * turn's and the caller's usage, those past the ones it counted before.
   */
  calls: SubtaskModelCall[];
};

/** A subagent that ran a different subtask (type, params or recipe version changed) refuses to resume it. */
export interface SubagentRefusal {
  code: "ERR_SUBAGENT_FINGERPRINT";
  message: string;
}

/** A chunk of a recipe just finished: its name, and how many of the subtask's chunks have (over all its runs). */
export interface SubtaskChunk {
  name: string;
  finished: number;
}

/** What the parent calls on a subagent facet. */
export interface SubagentObject {
  /**
   * Runs, resumes after its last finished chunk, or answers from its record.
   * `onChunk` (a function over RPC) hears each chunk this run finishes: its subtask's progress.
   */
  runSubtask(spec: SubtaskSpec, onChunk?: (chunk: SubtaskChunk) => void): Promise<Verdict<SubtaskRunResult, SubagentRefusal>>;
  /** Records the answer to the recipe's question `name`; the next run's `ask` returns it. Idempotent: the first answer stands. */
  answer(name: string, answer: HumanAnswer): Promise<Verdict<null, never>>;
  /** Asks the running recipe to stop at its next chunk. */
  cancel(): Promise<Verdict<null, never>>;
}
