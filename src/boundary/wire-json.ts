// The A2A objects as they cross a boundary: their wire (proto-JSON) form,
// typed as far as the platform reads them. Everything else passes through.

export interface PartJson {
  text?: string;
  data?: unknown;
  url?: string;
  raw?: string;
  mediaType?: string;
  filename?: string;
  metadata?: Record<string, unknown>;
}

export interface MessageJson {
  messageId: string;
  role: string;
  parts: PartJson[];
  contextId?: string;
  taskId?: string;
  metadata?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface TaskStatusJson {
  /** A wire state name, e.g. `TASK_STATE_WORKING`. */
  state: string;
  message?: MessageJson;
  /** RFC 3339. */
  timestamp?: string;
}

export interface TaskJson {
  id: string;
  contextId: string;
  status: TaskStatusJson;
  history?: MessageJson[];
  artifacts?: ArtifactJson[];
  metadata?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface ArtifactJson {
  artifactId: string;
  name?: string;
  description?: string;
  parts: PartJson[];
  metadata?: Record<string, unknown>;
}

/** A `statusUpdate` StreamResponse's payload. */
export interface StatusUpdateJson {
  taskId: string;
  contextId: string;
  status: TaskStatusJson;
  metadata?: Record<string, unknown>;
}

/** An `artifactUpdate` StreamResponse's payload: one chunk of an artifact as it is written. */
export interface ArtifactUpdateJson {
  taskId: string;
  contextId: string;
  artifact: ArtifactJson;
  /** Appends these parts to the artifact of that id so far; false starts (or restarts) it. */
  append: boolean;
  lastChunk: boolean;
}

/** A StreamResponse (A2A 1.0): one event of a stream, or a push's body. */
export type StreamEventJson = { task: TaskJson } | { message: MessageJson } | { statusUpdate: StatusUpdateJson } | { artifactUpdate: ArtifactUpdateJson };

export interface PushConfigJson {
  url: string;
  id?: string;
  taskId?: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
  [field: string]: unknown;
}
