import { ACCEPTED_OUTPUT_MODES_KEY, acceptsMediaType, base64Bytes, bytesBase64, partMediaType, partProblem, textOf } from "../a2a/parts.js";
import type { WithheldPart } from "../agent/policy.js";
import type { ArtifactJson, ArtifactUpdateJson, PartJson, TaskJson } from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import type { TaskEventRow } from "../db/task-event-log.js";
import type { NewArtifact } from "../plugin/contract.js";
import type { LoopDeps } from "./deps.js";

// Artifacts as a round writes them, chunk by chunk as events of the task:
// the answer as the model writes it (answer-stream.ts) and the tools'
// artifacts (`ToolContext.addArtifact`), shaped for the client's
// `acceptedOutputModes`; and what a task's chunks add up to, which the object
// reads for the snapshot of a task being written and for the finished task
// (docs/protocol.md "Events, streams and pushes").

/** The artifact a turn's answer is, streamed as it is written and then whole in the finished task. */
export const ANSWER_ARTIFACT = "answer";

/** What {@link addArtifact} names its artifacts by: only those join the finished task, an agent's own chunks end as its outcome says. */
const ADDED_PREFIX = "added-";

/** What adding a tool's artifact reads and writes: the task and its artifact events, the caps and words, and the chunk write. */
export interface ArtifactDeps {
  db: Pick<AgentDB, "tasks" | "events">;
  /** JSON bytes all the added artifacts of the task may take together (`parts.maxArtifactBytes`). */
  maxBytes: number;
  /** The agent's words for a part the client does not accept. */
  withheld: (part: WithheldPart) => string;
  append: LoopDeps["appendArtifact"];
}

/**
 * Adds a tool's artifact to a running task: whole, as one artifact event
 * (`lastChunk`), so streams show it at once, and shaped by the client's
 * `acceptedOutputModes`; the terminal write puts it in the finished task. A tool
 * runs once per journaled call (a replayed call returns its recorded result
 * without running), so a retried step adds nothing twice. Throws on a
 * malformed artifact, a finished task, or past the byte budget.
 */
export function addArtifact(deps: ArtifactDeps, task: Pick<TaskJson, "id" | "contextId" | "metadata">, artifact: NewArtifact): { artifactId: string } {
  const { db } = deps;
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
    parts: partsForClient(artifact.parts.map(wirePart), acceptedOutputModesOf(task), deps.withheld, name),
    ...(artifact.metadata ? { metadata: artifact.metadata } : {}),
  };
  const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;
  const before = bytes(addedArtifacts(db.events.ofKind(task.id, "artifact")));
  if (before + bytes(shaped) > deps.maxBytes) {
    throw new RangeError(`addArtifact: the task's artifacts would take more than ${deps.maxBytes} bytes (parts.maxArtifactBytes)`);
  }
  deps.append(task, shaped, { append: false, lastChunk: true });
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

/** The modes the task's client accepts; `undefined`: every part. */
function acceptedOutputModesOf(task: Pick<TaskJson, "metadata">): readonly string[] | undefined {
  const modes = task.metadata?.[ACCEPTED_OUTPUT_MODES_KEY];
  return Array.isArray(modes) && modes.length > 0 ? (modes as string[]) : undefined;
}

/**
 * An artifact's parts as a client with `modes` reads them (docs/protocol.md
 * "SendMessage" → acceptedOutputModes): a part it takes as it is; text
 * always, being every other part's fallback; otherwise its faithful text
 * form (data as JSON, a text file's text), or a text part in the agent's
 * words naming what was withheld. Never dropped.
 */
function partsForClient(
  parts: readonly PartJson[],
  modes: readonly string[] | undefined,
  withheld: (part: WithheldPart) => string,
  artifact?: { name?: string },
): PartJson[] {
  if (!modes) return [...parts];
  return parts.map((part) => {
    if (part.text !== undefined || acceptsMediaType(modes, partMediaType(part))) return part;
    const keep = part.metadata ? { metadata: part.metadata } : {};
    if (part.data !== undefined) return { text: JSON.stringify(part.data), ...keep };
    const mediaType = partMediaType(part);
    if (part.raw !== undefined && mediaType.startsWith("text/"))
      return { text: textOf(base64Bytes(part.raw), part.mediaType), ...(part.filename ? { filename: part.filename } : {}), ...keep };
    return {
      text: withheld({
        mediaType,
        ...(part.filename ? { filename: part.filename } : {}),
        ...(part.url === undefined ? {} : { url: part.url }),
        ...(artifact ? { artifact } : {}),
      }),
      ...keep,
    };
  });
}
