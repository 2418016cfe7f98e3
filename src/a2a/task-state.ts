import { TaskState, taskStateFromJSON, taskStateToJSON } from "@a2a-js/sdk";
import { INTERRUPTED_STATE_NAMES, TERMINAL_STATE_NAMES } from "./wire.js";

const TERMINAL = new Set(TERMINAL_STATE_NAMES);
const INTERRUPTED = new Set(INTERRUPTED_STATE_NAMES);

/** Whether a wire state name (`TASK_STATE_CANCELED`) is one a task never leaves (A2A §4.1.3). */
export const isTerminalName = (name: string): boolean => TERMINAL.has(name);

/** Whether a task in state `name` waits for its caller (a human's answer). */
export const isInterruptedName = (name: string): boolean => INTERRUPTED.has(name);

/** Whether a task in state `name` ends a stream or a blocking wait: terminal, or waiting for its caller. */
export const endsWait = (name: string): boolean => TERMINAL.has(name) || INTERRUPTED.has(name);

/**
 * The wire name of a state a client sent (its name or its enum number);
 * `undefined` for an unknown or unspecified one.
 */
export function parseStateName(name: unknown): string | undefined {
  if (typeof name !== "string" && typeof name !== "number") return undefined;
  const state = taskStateFromJSON(name);
  return state === TaskState.UNRECOGNIZED || state === TaskState.TASK_STATE_UNSPECIFIED ? undefined : taskStateToJSON(state);
}
