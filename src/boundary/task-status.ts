import { TRACE_KEY, type TraceContext } from "../a2a/trace-context.js";
import type { MessageJson, PartJson, TaskJson } from "./wire-json.js";

// A task's status changes in wire form, as plain functions of wire JSON: the
// object and the loop's human in the loop both build them, and neither
// imports the other (docs/protocol.md "Human in the loop").

/** A stored task's document (the object stores the wire JSON it answers with). */
export const taskOf = (row: { taskJson: string }): TaskJson => JSON.parse(row.taskJson) as TaskJson;

/** The trace a stored task's metadata names (its turn's), as what a later push of it carries; its flags and `tracestate` went with the turn. */
export function taskTraceOf(row: { taskJson: string }): TraceContext | undefined {
  const traceId = taskOf(row).metadata?.[TRACE_KEY];
  return typeof traceId === "string" && /^[0-9a-f]{32}$/.test(traceId) ? { traceId, flags: "01" } : undefined;
}

/** An agent message on a task, as a status message or a history entry. */
export function agentMessage(task: TaskJson, text: string): MessageJson {
  return { messageId: crypto.randomUUID(), role: "ROLE_AGENT", taskId: task.id, contextId: task.contextId, parts: [{ text }] };
}

/** The task moved to `state`, with an optional status message. */
export function withState(task: TaskJson, state: string, now: number, message?: MessageJson): TaskJson {
  const timestamp = new Date(now).toISOString();
  return { ...task, status: message ? { state, message, timestamp } : { state, timestamp } };
}

/** The parts of the message that opened a task (its first user message). */
export const requestParts = (task: TaskJson): PartJson[] => task.history?.find((m) => m.role === "ROLE_USER")?.parts ?? [];

/** The text of the message that opened a task: its text parts, concatenated and trimmed. */
export function requestText(task: TaskJson): string {
  return requestParts(task)
    .map((p: PartJson) => p.text ?? "")
    .join("")
    .trim();
}
