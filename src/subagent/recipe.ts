import type { Workspace } from "../plugin/workspace.js";

/** What a recipe is handed. */
export interface RecipeContext<Env = unknown> {
  env: Env;
  /**
   * Runs one resumable piece of the recipe. Its result is stored when it
   * finishes; a run resumed after an eviction returns the stored result
   * instead of running it again. Cancellation is checked before each chunk.
   */
  chunk<T>(name: string, run: () => Promise<T>): Promise<T>;
  workspace: Workspace;
  /** Which subtask and task this is. */
  subtaskId: string;
  taskId: string;
}

/** A subtask type's work, in chunks. Its return value is the subtask's result. */
export type Recipe<Env = unknown, Params = any> = (ctx: RecipeContext<Env>, params: Params) => Promise<unknown>;

export interface SubtaskSpec {
  subtaskId: string;
  taskId: string;
  type: string;
  params: unknown;
  fingerprint: string;
}

export type SubtaskRunResult =
  | { status: "done"; result: unknown }
  | { status: "failed"; error: string }
  | { status: "canceled" };

export class SubtaskCanceled extends Error {
  override name = "SubtaskCanceled";
}
