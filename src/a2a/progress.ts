// The draft A2A Task Progress extension v1 (docs/protocol.md "Progress"):
// its URI, the params every card declares, how a request activates it, and
// the payload's shape and bounds. Metadata only: no field of a core type.

/** The extension's URI: the key of its payload in `metadata`, and what `A2A-Extensions` names to activate it. */
export const PROGRESS_EXTENSION = "https://a2a-protocol.org/extensions/task-progress/v1";

/** The bounds every card declares and every payload keeps. */
export const PROGRESS_PARAMS = { maxTrackers: 20, maxMessageChars: 512, maxIdChars: 128, recommendedMaxUpdatesPerSecond: 2 } as const;

/** How the extension is declared in a card's `capabilities.extensions` (not required: a client that ignores it reads a plain stream). */
export const PROGRESS_CARD_EXTENSION = {
  uri: PROGRESS_EXTENSION,
  description: "Task progress: trackers for tool calls (tool:, mcp:), subtasks (subtask:) and rounds (round:) in working statusUpdate metadata",
  required: false,
  params: PROGRESS_PARAMS,
};

export type TrackerStatus = "running" | "completed" | "failed";

/** One unit of work as the draft's ProgressTracker has it, and nothing more; the kind is the id's prefix. */
export interface ProgressTracker {
  id: string;
  progress?: number;
  total?: number;
  message?: string;
  status: TrackerStatus;
  /** RFC 3339. */
  startedAt: string;
  updatedAt: string;
}

/** The draft's ProgressAggregate: advisory. */
export interface ProgressAggregate {
  progress: number;
  total?: number;
  message?: string;
}

/** What goes under {@link PROGRESS_EXTENSION} in an event's `metadata` and its status message's. */
export interface ProgressPayload {
  trackers: ProgressTracker[];
  aggregate?: ProgressAggregate;
}

/** `text` cut to `max` characters (code points), an ellipsis marking the cut. */
export function clipChars(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}
