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
  artifacts?: unknown[];
  metadata?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface PushConfigJson {
  url: string;
  id?: string;
  taskId?: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
  [field: string]: unknown;
}
