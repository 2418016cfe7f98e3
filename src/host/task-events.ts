import type { WithheldPart } from "../agent/policy.js";
import type { NewArtifact } from "../plugin/contract.js";
import { base64Bytes, bytesBase64, partProblem } from "../a2a/parts.js";
import { isTerminalName } from "../a2a/task-state.js";
import type { ArtifactJson, ArtifactUpdateJson, PartJson, StatusUpdateJson, StreamEventJson, TaskJson } from "../boundary/index.js";
import type { AgentDB, StatusWriteVerdict } from "../db/agent-db.js";
import type { TaskEventRow } from "../db/task-event-log.js";
import type { NewTask } from "../db/task-store.js";
import { acceptedOutputModesOf, partsForClient, toWrite } from "./task-wire.js";

// A task's events, built here and nowhere else: every status change is
// written with its event (the streams' and pushes' `seq`), and the answer's
// chunks are events of their own. See docs/protocol.md "Events, streams and pushes".

/** States a stream (and a blocking send) ends at besides the terminal ones: the task waits for its caller. */
const INTERRUPTED = new Set(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]);

/** Whether a task in `state` waits for its caller (a human's answer). */
export const isInterrupted = (state: string) => INTERRUPTED.has(state);

/** Whether a task in `state` ends a stream or a blocking wait. */
export const endsWait = (state: string) => isTerminalName(state) || INTERRUPTED.has(state);

export const statusUpdateOf = (task: TaskJson): StatusUpdateJson => ({ taskId: task.id, contextId: task.contextId, status: task.status });

const statusEvent = (task: TaskJson) => ({ kind: "status" as const, json: JSON.stringify({ statusUpdate: statusUpdateOf(task) } satisfies StreamEventJson) });

/** A new task, stored with its first event. */
export function insertTask(
  db: AgentDB,
  task: TaskJson,
  now: number,
  extra: Omit<NewTask, keyof ReturnType<typeof toWrite>>,
  pushConfig?: { id: string; json: string },
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

/** What {@link addArtifact} names its artifacts by: only those join the finished task, an agent's own chunks end as its outcome says. */
const ADDED_PREFIX = "added-";

export interface AddArtifactOptions {
  /** JSON bytes all the added artifacts of the task may take together (`parts.maxArtifactBytes`). */
  maxBytes: number;
  /** The agent's words for a part the client does not accept. */
  withheld: (part: WithheldPart) => string;
}

/**
 * Adds a tool's artifact to a running task: whole, as one artifact event
 * (`lastChunk`), so streams show it at once, and shaped by the client's
 * `acceptedOutputModes`; `finishTurn` puts it in the finished task. A tool
 * runs once per journaled call (a replayed call returns its recorded result
 * without running), so a retried step adds nothing twice. Throws on a
 * malformed artifact, a finished task, or past the byte budget.
 */
export function addArtifact(
  db: AgentDB,
  task: Pick<TaskJson, "id" | "contextId" | "metadata">,
  artifact: NewArtifact,
  options: AddArtifactOptions,
): { artifactId: string } {
  if (!Array.isArray(artifact?.parts) || artifact.parts.length === 0) throw new TypeError("addArtifact: an artifact needs at least one part");
  for (const [index, part] of artifact.parts.entries()) {
    const problem = part && typeof part === "object" ? partProblem(part) : "a part is an object";
    if (problem) throw new TypeError(`addArtifact: parts[${index}]: ${problem}`);
  }
  const row = db.tasks.get(task.id);
  if (!row || db.tasks.isFinal(row.state)) throw new RangeError(`addArtifact: task ${task.id} is not running`);
  const name = typeof artifact.name === "string" && artifact.name ? { name: artifact.name } : undefined;
  const shaped: ArtifactJson = {
    artifactId: `${ADDED_PREFIX}${crypto.randomUUID()}`,
    ...(name ?? {}),
    ...(typeof artifact.description === "string" && artifact.description ? { description: artifact.description } : {}),
    parts: partsForClient(artifact.parts.map(wirePart), acceptedOutputModesOf(task), options.withheld, name),
    ...(artifact.metadata ? { metadata: artifact.metadata } : {}),
  };
  const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;
  const before = bytes(addedArtifacts(db.events.ofKind(task.id, "artifact")));
  if (before + bytes(shaped) > options.maxBytes) {
    throw new RangeError(`addArtifact: the task's artifacts would take more than ${options.maxBytes} bytes (parts.maxArtifactBytes)`);
  }
  appendArtifactChunk(db, task, shaped, { append: false, lastChunk: true });
  return { artifactId: shaped.artifactId };
}

/** A part as stored: the fields the wire knows, `raw` in standard base64. */
function wirePart(part: PartJson): PartJson {
  const out: PartJson = {};
  if (part.text !== undefined) out.text = part.text;
  else if (part.data !== undefined) out.data = part.data;
  else if (part.url !== undefined) out.url = part.url;
  else if (part.raw !== undefined) out.raw = bytesBase64(base64Bytes(part.raw));
  if (part.mediaType) out.mediaType = part.mediaType;
  if (part.filename) out.filename = part.filename;
  if (part.metadata) out.metadata = part.metadata;
  return out;
}

/** The artifacts a turn's tools added, as its events hold them, in the order they were added. */
export const addedArtifacts = (rows: readonly TaskEventRow[]): ArtifactJson[] => foldArtifacts(rows).filter((a) => a.artifactId.startsWith(ADDED_PREFIX));

/** The state a status event moves its task to; undefined for any other event. */
export function stateOfEvent(row: TaskEventRow): string | undefined {
  if (row.kind !== "status") return undefined;
  return (JSON.parse(row.eventJson) as { statusUpdate: StatusUpdateJson }).statusUpdate.status.state;
}

/**
 * The artifacts a task's chunks add up to so far, for the snapshot of a task
 * still being written: a chunk with `append` adds its parts, one without
 * starts its artifact over (a retried step, a fallback model).
 */
export function foldArtifacts(rows: readonly TaskEventRow[]): ArtifactJson[] {
  const byId = new Map<string, ArtifactJson>();
  for (const row of rows) {
    if (row.kind !== "artifact") continue;
    const { artifact, append } = (JSON.parse(row.eventJson) as { artifactUpdate: ArtifactUpdateJson }).artifactUpdate;
    const before = byId.get(artifact.artifactId);
    byId.set(artifact.artifactId, append && before ? { ...before, parts: mergeParts(before.parts, artifact.parts) } : artifact);
  }
  return [...byId.values()];
}

/** Appended text runs on in the last text part; other parts follow it. */
function mergeParts(before: ArtifactJson["parts"], added: ArtifactJson["parts"]): ArtifactJson["parts"] {
  const parts = [...before];
  for (const part of added) {
    const last = parts.at(-1);
    if (part.text !== undefined && last?.text !== undefined && Object.keys(part).length === 1 && Object.keys(last).length === 1)
      parts[parts.length - 1] = { text: last.text + part.text };
    else parts.push(part);
  }
  return parts;
}
