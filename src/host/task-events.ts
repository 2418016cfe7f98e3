import type { ArtifactJson, ArtifactUpdateJson, StatusUpdateJson, StreamEventJson, TaskJson } from "../boundary/index.js";
import type { AgentDB, StatusWriteVerdict } from "../db/agent-db.js";
import type { TaskEventRow } from "../db/task-event-log.js";
import type { NewTask } from "../db/task-store.js";
import { toWrite } from "./task-wire.js";

// A task's events, written here and nowhere else: every status change is
// written with its event (the streams' and pushes' `seq`); an artifact's
// chunks (src/round/artifacts.ts) and a round's progress (src/round/progress)
// are events of their own. See docs/protocol.md "Events, streams and pushes".

export const statusUpdateOf = (task: TaskJson): StatusUpdateJson => ({ taskId: task.id, contextId: task.contextId, status: task.status });

const statusEvent = (task: TaskJson) => ({ kind: "status" as const, json: JSON.stringify({ statusUpdate: statusUpdateOf(task) } satisfies StreamEventJson) });

/** A new task, stored with its first event. */
export function insertTask(
  db: AgentDB,
  task: TaskJson,
  now: number,
  extra: Omit<NewTask, keyof ReturnType<typeof toWrite>>,
  pushConfig?: { id: string; json: string; progress?: boolean },
): void {
  db.insertTask({ ...toWrite(task, now), ...extra }, statusEvent(task), pushConfig);
}

/** Every status change of a task goes through here: the guarded write and its event, together. */
export function writeStatus(db: AgentDB, task: TaskJson, now: number): StatusWriteVerdict {
  return db.writeTask(toWrite(task, now), statusEvent(task));
}

/** One chunk of an artifact being written (the answer as the model writes it). */
export function appendArtifactChunk(
  db: AgentDB,
  task: Pick<TaskJson, "id" | "contextId">,
  artifact: ArtifactJson,
  chunk: { append: boolean; lastChunk: boolean },
): void {
  // Only the two flags: a caller's chunk object may carry more (its parts), which must not reach the wire.
  const artifactUpdate: ArtifactUpdateJson = { taskId: task.id, contextId: task.contextId, artifact, append: chunk.append, lastChunk: chunk.lastChunk };
  db.appendEvent(task.id, { kind: "artifact", json: JSON.stringify({ artifactUpdate } satisfies StreamEventJson) });
}

/** The state a status event moves its task to; undefined for any other event. */
export function stateOfEvent(row: TaskEventRow): string | undefined {
  if (row.kind !== "status") return undefined;
  return (JSON.parse(row.eventJson) as { statusUpdate: StatusUpdateJson }).statusUpdate.status.state;
}
