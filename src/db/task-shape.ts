import type { TaskJson } from "./task-store.js";

/**
 * A task as a reply shows it: `historyLength` keeps the newest N messages (0
 * none, unset all; an empty history is left out) and artifacts only with
 * `includeArtifacts`. Every method that returns a task goes through here.
 */
export function shapeTask(task: TaskJson, options: { historyLength?: number; includeArtifacts: boolean }): TaskJson {
  const out: TaskJson = { ...task };
  if (!options.includeArtifacts) delete out.artifacts;
  if (options.historyLength !== undefined && Array.isArray(out.history)) {
    out.history = options.historyLength === 0 ? [] : out.history.slice(-options.historyLength);
    if ((out.history as unknown[]).length === 0) delete out.history;
  }
  return out;
}
