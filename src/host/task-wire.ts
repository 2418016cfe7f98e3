import { ACCEPTED_OUTPUT_MODES_KEY } from "../a2a/parts.js";
import type { TaskWrite } from "../db/task-store.js";
import type { ArtifactJson, MessageJson, TaskJson, TurnOutcome } from "../boundary/index.js";
import { agentMessage, withState } from "../boundary/task-status.js";
import { ANSWER_ARTIFACT } from "../round/artifacts.js";

// Tasks in their wire form, built and shaped here (a status change's message
// and state in src/boundary/task-status.ts): the object stores the wire JSON
// it answers with, so a reply costs no re-encoding.

const at = (now: number) => new Date(now).toISOString();

/** The `submitted` task a new message opens; the send's `acceptedOutputModes`, if any, stay in its metadata for every later reply. */
export function submittedTask(message: MessageJson, ids: { id: string; contextId: string }, now: number, acceptedOutputModes?: string[]): TaskJson {
  return {
    id: ids.id,
    contextId: ids.contextId,
    status: { state: "TASK_STATE_SUBMITTED", timestamp: at(now) },
    history: [{ ...message, taskId: ids.id, contextId: ids.contextId }],
    ...(acceptedOutputModes?.length ? { metadata: { [ACCEPTED_OUTPUT_MODES_KEY]: acceptedOutputModes } } : {}),
  };
}

/**
 * The task as a finished turn leaves it: the reply as the status message and
 * in the history, and the turn's artifacts — by default, for a completed
 * turn, the reply as the `answer` artifact a client reads the result from.
 * An empty reply (a declining gate) leaves no message.
 */
export function terminalTask(task: TaskJson, outcome: TurnOutcome, now: number, added: readonly ArtifactJson[] = []): TaskJson {
  const reply = outcome.text === "" ? undefined : agentMessage(task, outcome.text);
  const done = withState(task, outcome.state, now, reply);
  if (reply) done.history = [...(task.history ?? []), reply];
  // What the turn's tools added follows the answer, in the order it was added.
  const artifacts = [
    ...(outcome.artifacts ??
      (reply && outcome.state === "TASK_STATE_COMPLETED" ? [{ artifactId: ANSWER_ARTIFACT, name: ANSWER_ARTIFACT, parts: reply.parts }] : [])),
    ...added,
  ];
  if (artifacts.length) done.artifacts = [...(task.artifacts ?? []), ...artifacts];
  return done;
}

/**
 * A task as a reply shows it: `historyLength` keeps the newest N messages (0
 * none, unset all; an empty history is left out) and artifacts only with
 * `includeArtifacts`.
 */
export function shapeTask(task: TaskJson, options: { historyLength?: number; includeArtifacts: boolean }): TaskJson {
  const out: TaskJson = { ...task };
  if (!options.includeArtifacts) delete out.artifacts;
  if (options.historyLength !== undefined && out.history) {
    out.history = options.historyLength === 0 ? [] : out.history.slice(-options.historyLength);
    if (out.history.length === 0) delete out.history;
  }
  return out;
}

/** What the store writes for a task. */
export function toWrite(task: TaskJson, now: number): TaskWrite {
  return { id: task.id, state: task.status.state, statusAt: Date.parse(task.status.timestamp ?? "") || now, json: JSON.stringify(task) };
}
