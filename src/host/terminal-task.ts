import { Role, Task, TaskState, taskStateFromJSON } from "@a2a-js/sdk";
import type { TaskJson } from "../db/task-store.js";
import type { TurnOutcome } from "../turn/turn-protocol.js";

/**
 * The task as a finished turn leaves it: the reply as the status message, in
 * the history after the user's message, and (for a completed turn) as the
 * `answer` artifact a client reads the result from.
 */
export function terminalTask(current: TaskJson, outcome: TurnOutcome, now = Date.now()): TaskJson {
  const task = Task.fromJSON(current);
  const reply = {
    messageId: crypto.randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: "text" as const, value: outcome.text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const state = taskStateFromJSON(outcome.state);
  if (outcome.text === "") {
    // A turn that chose not to answer (a declining gate): no reply to record.
    return Task.toJSON({ ...task, status: { state, message: undefined, timestamp: new Date(now).toISOString() } }) as TaskJson;
  }
  return Task.toJSON({
    ...task,
    status: { state, message: reply, timestamp: new Date(now).toISOString() },
    history: [...task.history, reply],
    artifacts:
      state === TaskState.TASK_STATE_COMPLETED
        ? [...task.artifacts, { artifactId: "answer", name: "answer", description: "", parts: reply.parts, metadata: undefined, extensions: [] }]
        : task.artifacts,
  }) as TaskJson;
}

/** The text of the message that opened a task (its first user message). */
export function requestText(task: TaskJson): string {
  const first = Task.fromJSON(task).history.find((m) => m.role === Role.ROLE_USER);
  return (first?.parts ?? [])
    .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
    .join("")
    .trim();
}
