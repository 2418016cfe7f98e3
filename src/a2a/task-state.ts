import { TaskState, taskStateFromJSON, taskStateToJSON } from "@a2a-js/sdk";
import { TERMINAL_STATE_NAMES } from "./wire.js";

/** The states after which a task never changes again (A2A §4.1.3). */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set(TERMINAL_STATE_NAMES.map((name) => taskStateFromJSON(name)));

export const isTerminal = (state: TaskState) => TERMINAL_STATES.has(state);

/** The wire spelling (`TASK_STATE_WORKING`) of a state, for storage and messages. */
export const stateName = (state: TaskState): string => taskStateToJSON(state);

/** Parses a wire state name; unknown or unspecified names yield `undefined`. */
export function parseStateName(name: unknown): TaskState | undefined {
  if (typeof name !== "string" && typeof name !== "number") return undefined;
  const state = taskStateFromJSON(name);
  return state === TaskState.UNRECOGNIZED || state === TaskState.TASK_STATE_UNSPECIFIED
    ? undefined
    : state;
}
