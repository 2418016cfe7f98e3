/**
 * The one event catalogue (docs/telemetry.md): every event the platform emits,
 * by name, with the fields its `data` holds. Ids, durations, counts and
 * outcomes only: no identity, token, secret or message text (an agent may opt
 * in to text with `telemetry.messageText`, which adds `text` to
 * `task.accepted` and `turn.finished`).
 */
export interface EventCatalogue {
  /** A new task was recorded (`SendMessage` or a stream opened it). */
  "task.accepted": { messageId: string; stream: boolean; pushConfigs: number; text?: string };
  /** A message continued a task that was waiting (a human's answer, a follow-up). */
  "task.continued": { messageId: string };
  "task.canceled": { from: string };
  /** The turn's Workflow took the task up (`submitted` → `working`). */
  "turn.started": { instanceId: string };
  /** The terminal write: the state the task ended in, the time since it was accepted, what its model calls cost. */
  "turn.finished": {
    state: string;
    durationMs: number;
    modelCalls: number;
    inputTokens: number;
    outputTokens: number;
    /** Of the input tokens, those the provider served from its cache (present when any were). */
    cachedInputTokens?: number;
    /** Of the output tokens, those spent on reasoning (present when any were). */
    reasoningTokens?: number;
    text?: string;
  };
  /** One exchange with the model (its tool steps included), after retries and fallback. */
  "model.call": {
    round: number;
    model: string;
    /** Whether a fallback model answered (or was tried last). */
    fallback: boolean;
    /** Model requests past the first that the exchange needed (retries, the fallback's). */
    retries: number;
    outcome: "ok" | "error" | "aborted";
    steps: number;
    inputTokens: number;
    outputTokens: number;
    /** Of the input tokens, those the provider reports it served from its cache (present when it reports any). */
    cachedInputTokens?: number;
    /** Of the output tokens, those the provider reports spent on reasoning (present when it reports any). */
    reasoningTokens?: number;
    durationMs: number;
    /** A subagent's call (`RecipeContext.generate`): the subtask it was made for. */
    subtaskId?: string;
  };
  /** A tool call begins to run (not one replayed from the journal): its `tool.call` follows when it settles, with the same `callId`. */
  "tool.started": { round: number; tool: string; callId: string };
  /** One tool call as the journal saw it: run, replayed from the journal, or reported interrupted. `callId`: the model's id of the call. */
  "tool.call": { round: number; tool: string; callId: string; outcome: "ok" | "error" | "replayed" | "interrupted"; durationMs: number; redacted: boolean };
  "round.finished": { round: number; outcome: "answer" | "delegated" | "ask" | "canceled"; durationMs: number };
  "subtask.started": { round: number; subtaskId: string; type: string };
  "subtask.finished": { round: number; subtaskId: string; type: string; outcome: string; durationMs: number };
  "hitl.asked": { requestId: string; requestKind: string; expiresAt: string };
  "hitl.answered": { requestId: string; outcome: string; optionId?: string };
  "hitl.expired": { requestId: string };
  /** A conversation folded its oldest messages into its summary. */
  "conversation.compacted": { folded: number; durationMs: number };
  /** One delivery attempt to one push config (emitted by the turn's Workflow, in the step that makes the attempt: `run` for the first). */
  "push.attempt": {
    configId: string;
    seq: number;
    attempt: number;
    /** The HTTP status, 0 for no answer or a skipped attempt. */
    status: number;
    outcome: "delivered" | "transient" | "permanent" | "skipped";
    durationMs: number;
  };
  "push.dead_lettered": { configId: string; seq: number; status: number };
  /**
   * A push dropped because a later event of its task was ready for the same config (emitted by the turn's
   * Workflow, in the step that made its last attempt): not delivered, and not a dead letter.
   */
  "push.superseded": { configId: string; seq: number };
  "push.redelivered": { configId: string; delivered: number; givenUp: number };
  /** What the reconciler did about a turn it found without progress. */
  "reconciler.action": { action: string; instanceId: string };
  /** A call refused before any task was created: the budget, a cap on open turns or streams, or the edge's rate limit. */
  "quota.exceeded": { limit: string; retryAfterSeconds: number };
  /** A request the edge refused: which check, and what it answered. `caller` is set only when the token verified. */
  "edge.refused": { check: string; status: number; code: number; method?: string };
  /**
   * An MCP server's connection changed, as this object sees it: `ready` (its
   * tools listed), `unavailable` (it could not be reached in time for a turn,
   * or failed; `reason` a short code), `dropped` (a live connection failed,
   * and the next turn reconnects).
   */
  "mcp.server": { server: string; status: "ready" | "unavailable" | "dropped"; tools: number; durationMs: number; reason?: string };
  /**
   * A context or the whole caller was erased (docs/retention.md "Erasure"):
   * what went, by kind, and how many plugin stores kept their rows. No
   * context id and nothing of what was erased.
   */
  "erasure.done": {
    scope: "context" | "caller";
    tasks: number;
    events: number;
    messages: number;
    toolCalls: number;
    hitlRequests: number;
    pushConfigs: number;
    subagents: number;
    plugins: number;
    unerased: number;
    durationMs: number;
  };
  /** The tenant's agent refused to start: the culprit by kind and name, the error's code. */
  "agent.start_failed": { code: string; culpritKind: string; culpritName: string };
}

export type EventName = keyof EventCatalogue;

/** The ids an event is about; each is present when the event has one. */
export interface EventScope {
  tenant?: string;
  /** HMAC-SHA256 of the caller under a key derived from the signing key (caller-hash.ts): never the identity itself. */
  caller?: string;
  taskId?: string;
  contextId?: string;
  /** The turn's Workflow instance id. */
  turnId?: string;
  /** The W3C trace id of the task's turn: the one the send's `traceparent` named, or one started for it (docs/telemetry.md "Trace context"). */
  traceId?: string;
}

/** Values a plugin's own event may carry: flat, and scrubbed of secrets like the rest. */
export type PluginEventData = Record<string, string | number | boolean | null>;

/** One event as it is logged (one JSON line) and handed to subscribers. */
export type AgentEvent =
  | {
      [N in EventName]: EventLine<N, EventCatalogue[N]>;
    }[EventName]
  | EventLine<`plugin.${string}`, PluginEventData>;

export interface EventLine<N extends string, D> extends EventScope {
  /** Marks the line among a Worker's other logs. */
  type: typeof EVENT_LINE_TYPE;
  /** The shape's version: a field is only ever added within it. */
  v: 1;
  event: N;
  /** Unique per occurrence and stable across a Workflow step's replay: a consumer de-duplicates on it. */
  eventId: string;
  /** RFC 3339, UTC. */
  at: string;
  data: D;
}

export const EVENT_LINE_TYPE = "dynamicagents.event";
