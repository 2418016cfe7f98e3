import type { TraceContext } from "../a2a/trace-context.js";
import type { TurnParams } from "./turn-object.js";
import type { Verdict } from "./verdict.js";
import type { MessageJson, PushConfigJson, TaskJson } from "./wire-json.js";

/** `SendMessage` as the edge hands it to the caller's object, every part already checked. */
export interface BeginTask {
  tenant: string;
  /** This deployment's origin, as the edge determined it. */
  origin: string;
  /** The user's message; its `messageId` is the idempotency key. */
  message: MessageJson;
  /** The call's push config, validated against the gatekeeper allowlist. */
  pushConfig?: PushConfigJson;
  /** How much history the reply's task shows. */
  historyLength?: number;
  /** Who is calling, as the verified token says: the one who answers a human-in-the-loop request. */
  caller?: { key: string; name?: string /** The verified token's `iss`: with the tenant and key, whom events hash as the caller. */; gatekeeper?: string };
  /** `returnImmediately`: the reply must be a task; otherwise the agent may answer with a message instead. */
  immediate?: boolean;
  /** `acceptedOutputModes`, kept with a new task so every later reply applies them; absent: every part. */
  acceptedOutputModes?: string[];
  /**
   * `SendStreamingMessage`: the caller's stream cap is checked before anything
   * is written (a refused stream creates no task), and a slot is held for the
   * stream the edge then opens (`Begun.streamSlot`).
   */
  stream?: true;
  /** The request activated progress (docs/protocol.md "Progress"): its push config is sent progress events. */
  progress?: true;
  /** The request's W3C trace context, when it named a well-formed one: a turn this send starts continues it. */
  trace?: TraceContext;
}

/** An accepted turn, for the edge to start after its reply (`createA2AWorker`'s `startTurn`). */
export interface TurnToStart {
  instanceId: string;
  params: TurnParams;
}

export interface Begun {
  /** The task, shaped for the reply. */
  task: TaskJson;
  /** The turn this call created; absent for a retried `messageId`, which starts nothing. */
  turn?: TurnToStart;
  /** An answer to a human-in-the-loop request already settled (a repeat, a loser): the task as it is, at once, even for a blocking send. */
  settledBefore?: true;
  /** The stream slot held for a streaming send (`BeginTask.stream`): `StreamQuery.slot` of the stream the edge opens next. */
  streamSlot?: string;
}

/** A send the agent answered with a message: no task exists (A2A allows it for blocking and streaming sends). */
export interface Replied {
  message: MessageJson;
}

export interface TaskQuery {
  taskId: string;
  historyLength?: number;
}

/** A stream of a task's events (`SendStreamingMessage`, `SubscribeToTask`). */
export interface StreamQuery extends TaskQuery {
  /**
   * `SubscribeToTask`'s `Last-Event-ID`: the snapshot, then every event after
   * that `seq`, also of a terminal task. Without it the snapshot is followed
   * by live events only, and a terminal task is refused (`subscribe`).
   */
  afterSeq?: number;
  /** `send`: the stream of a send just accepted (a terminal task gets its snapshot); `subscribe`: `SubscribeToTask`. */
  purpose: "send" | "subscribe";
  /** A slot `beginTask` held for this stream: it opens within the cap already checked. */
  slot?: string;
  /** The request activated progress (docs/protocol.md "Progress"): the stream carries progress events; without, it skips them. */
  progress?: true;
}

/**
 * A task's events as the object streams them to the edge: one JSON line per
 * event, `{"seq": n, "event": <StreamResponse>}`, the snapshot first; the
 * object ends it after the event that makes the task terminal or interrupted.
 * Cancelling it releases the subscription.
 */
export type EventLines = ReadableStream<Uint8Array>;

/** The tenant and origin a push config was set through: what a re-delivery it sets off runs as. */
export interface PushConfigFrom {
  tenant: string;
  origin: string;
  /** The request that set it activated progress: the config is sent progress events. */
  progress?: true;
}

/** `ListTasks`, its params already checked by the edge. */
export interface TaskListQuery {
  contextId?: string;
  /** A wire state name. */
  state?: string;
  /** Epoch ms: tasks whose status changed at or after it. */
  statusAfter?: number;
  /** 1–100. */
  pageSize: number;
  /** A `nextPageToken` of an earlier page, as the client sent it. */
  pageToken?: string;
  historyLength?: number;
  includeArtifacts: boolean;
}

export interface TaskListPage {
  tasks: TaskJson[];
  /** Empty on the last page. */
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/**
 * What an erasure removed (docs/retention.md "Erasure"), the answer of
 * `dynamicagents/DeleteContext` and `dynamicagents/DeleteCallerData`: rows
 * (and subagents) by kind, and each plugin store that kept its rows (it has
 * no erasure hook) with how many. A repeat counts zeros.
 */
export interface Erasure {
  erased: { tasks: number; events: number; messages: number; toolCalls: number; hitlRequests: number; pushConfigs: number; subagents: number; plugins: number };
  unerased: { plugin: string; rows: number }[];
}

/**
 * What the edge calls on a verified caller's Durable Object. The object is
 * addressed by the caller's identity, so another caller's task is simply not
 * there: TaskNotFound, never a hint that it exists.
 */
export interface CallerObject {
  beginTask(input: BeginTask): Promise<Verdict<Begun | Replied>>;
  getTask(query: TaskQuery): Promise<Verdict<TaskJson>>;
  listTasks(query: TaskListQuery): Promise<Verdict<TaskListPage>>;
  cancelTask(taskId: string): Promise<Verdict<TaskJson>>;
  /** Resolves once the task is terminal or interrupted (at once if it is): a blocking send's wait. */
  awaitTask(query: TaskQuery): Promise<Verdict<TaskJson>>;
  /** The task's events; refused at the caller's cap on open streams (QUOTA_EXCEEDED). */
  streamTask(query: StreamQuery): Promise<Verdict<{ streamId: string; lines: EventLines }>>;
  /** The client of stream `streamId` went away: its subscription and its place under the cap are released (idempotent). */
  releaseStream(streamId: string): Promise<Verdict<null>>;
  /** Sets a config on a task; one set on a task with dead letters gets them re-delivered (`from`: who set it, for that re-delivery). */
  putPushConfig(taskId: string, config: PushConfigJson, from: PushConfigFrom): Promise<Verdict<PushConfigJson>>;
  getPushConfig(taskId: string, configId: string): Promise<Verdict<PushConfigJson>>;
  listPushConfigs(taskId: string): Promise<Verdict<PushConfigJson[]>>;
  deletePushConfig(taskId: string, configId: string): Promise<Verdict<null>>;
  /** Erases one of the caller's contexts: its tasks and all that hangs off them, its conversation, its plugins' rows. */
  deleteContext(contextId: string): Promise<Verdict<Erasure>>;
  /** Erases all the caller left here but today's and yesterday's token totals. */
  deleteCallerData(): Promise<Verdict<Erasure>>;
}
