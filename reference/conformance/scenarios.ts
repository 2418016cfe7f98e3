import type { ArtifactJson, PartJson } from "@dynamicagents/core/boundary";

// The public A2A conformance suite (a2a-tck, 1.0 line) picks an agent's
// behaviour by the prefix of each message's `messageId`; docs/conformance.md
// lists what each prefix does here. The texts, parts and data below are the
// suite's expected values: test fixtures, not words of the platform.

/** How long `test-resubscribe-message-id` stays working: the suite subscribes to it meanwhile and wants at least 4 s. */
export const RESUBSCRIBE_HOLD_MS = 4_000;

/** One chunk of an artifact as the task's stream carries it. */
interface ScriptedChunk {
  parts: PartJson[];
  append: boolean;
  lastChunk: boolean;
}

/** What a scenario does with the message that named it. */
export type Scenario =
  /** COMPLETED, the text as the agent's status message, no artifact. */
  | { kind: "complete"; text: string }
  /** The chunks as artifact events while working, then COMPLETED with the artifact whole, no status message. */
  | { kind: "artifact"; chunks: ScriptedChunk[]; artifact: ArtifactJson }
  /** A Message instead of a task (a task that must exist anyway completes with the text). */
  | { kind: "message"; text: string }
  /** INPUT_REQUIRED: a question any text answers; the answer's own prefix decides what comes next. */
  | { kind: "input-required"; prompt: string }
  /** REJECTED, the text as the agent's status message. */
  | { kind: "reject"; text: string }
  /** COMPLETED straight from SUBMITTED: no working status, no message, no artifact. */
  | { kind: "completed-at-once" }
  /** Working for `RESUBSCRIBE_HOLD_MS`, then COMPLETED with nothing to say. */
  | { kind: "hold" };

/** The id the scripted artifacts carry: one artifact per task. */
const ARTIFACT_ID = "conformance-output";

/** One artifact written in one chunk. */
function whole(parts: PartJson[]): Scenario {
  const artifact = { artifactId: ARTIFACT_ID, name: "output", parts };
  return { kind: "artifact", chunks: [{ parts, append: false, lastChunk: true }], artifact };
}

const text = (value: string): Scenario => whole([{ text: value }]);

/** The file the suite asks for: the bytes of "tck", base64 on the wire. */
const FILE_BYTES: PartJson = { raw: "dGNr", mediaType: "text/plain", filename: "output.txt" };
const FILE_URL: PartJson = { url: "https://example.com/output.txt", mediaType: "text/plain", filename: "output.txt" };

const COMPLETE: Scenario = { kind: "complete", text: "Hello from TCK" };

/** Prefix → scenario. Matched longest first, so `tck-artifact-file-url` is not taken for `tck-artifact-file`. */
const BY_PREFIX: ReadonlyArray<readonly [string, Scenario]> = (
  [
    ["tck-complete-task", COMPLETE],
    ["tck-artifact-text", text("Generated text content")],
    ["tck-artifact-file", whole([FILE_BYTES])],
    ["tck-artifact-file-url", whole([FILE_URL])],
    ["tck-artifact-data", whole([{ data: { key: "value", count: 42 } }])],
    ["tck-message-response", { kind: "message", text: "Direct message response" }],
    ["tck-input-required", { kind: "input-required", prompt: "Input required" }],
    ["tck-reject-task", { kind: "reject", text: "rejected" }],
    ["tck-stream-001", text("Stream hello from TCK")],
    ["tck-stream-002", { kind: "completed-at-once" }],
    ["tck-stream-003", text("Stream task lifecycle")],
    ["tck-stream-ordering-001", text("Ordered output")],
    ["tck-stream-artifact-text", text("Streamed text content")],
    ["tck-stream-artifact-file", whole([FILE_BYTES])],
    [
      "tck-stream-artifact-chunked",
      {
        kind: "artifact",
        chunks: [
          { parts: [{ text: "chunk-1 " }], append: true, lastChunk: false },
          { parts: [{ text: "chunk-2" }], append: true, lastChunk: true },
        ],
        // What the two chunks add up to, as a snapshot folds them (appended text runs on).
        artifact: { artifactId: ARTIFACT_ID, name: "output", parts: [{ text: "chunk-1 chunk-2" }] },
      },
    ],
    ["test-resubscribe-message-id", { kind: "hold" }],
  ] satisfies Array<readonly [string, Scenario]>
).toSorted((a, b) => b[0].length - a[0].length);

/** The scenario a message id names; any other id is `tck-complete-task`. */
export function scenarioOf(messageId: string): Scenario {
  return BY_PREFIX.find(([prefix]) => messageId.startsWith(prefix))?.[1] ?? COMPLETE;
}
