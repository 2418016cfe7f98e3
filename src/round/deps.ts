import type { TraceContext } from "../a2a/trace-context.js";
import type { AgentConfig } from "../agent/config.js";
import type { ModelEnv } from "../agent/model-config.js";
import type { AgentPolicy } from "../agent/policy.js";
import type { ModelChoice } from "../agent/providers.js";
import type { ArtifactJson, TaskJson, TurnOutcome } from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import type { AgentRuntime } from "../plugin/runtime.js";
import type { EventCatalogue, EventName, PluginEventData } from "../telemetry/index.js";
import type { HitlTarget, RequestBody, SubtaskAnswer, SubtaskAsk } from "./hitl/index.js";

// What the loop is handed and what it hands back: it knows nothing of the
// object that runs it (the agent's Durable Object, or an author's own).

/** What a round of a turn is handed. */
export interface TurnContext {
  task: TaskJson;
  /** The text of the message that opened the task. */
  text: string;
  /** This deployment's origin (see `requireSelfOrigin`). */
  origin: string;
  /** The turn's Workflow instance, which the round's events name. */
  turnId?: string;
  /** Push configs an earlier push is still pending at: the round's progress is not pushed to them. */
  held?: readonly string[];
  /**
   * The turn's trace (docs/telemetry.md "Trace context"): the model's and MCP
   * servers' requests and the progress pushes carry it, a new span each, and
   * the round's events name it; its `tracestate` goes on the pushes only (the
   * parts of a round join it through `turnTrace`, which leaves that behind).
   * Absent: the turn starts one of its own.
   */
  trace?: TraceContext;
}

/** What a round of the loop came to, for whoever runs it to act on. */
export type RoundStep =
  | { kind: "done"; outcome: TurnOutcome }
  | { kind: "continue"; text: string }
  /** The round waits for a human: the task is to be parked on this request. */
  | { kind: "ask"; target: HitlTarget; body: RequestBody }
  /** The turn's signal aborted the round (the task was canceled). */
  | { kind: "canceled" };

/** Where the loop's events go (docs/telemetry.md), scoped by whoever runs it. */
export interface LoopEvents {
  emit<N extends EventName>(
    name: N,
    taskId: string | undefined,
    data: EventCatalogue[N],
    occurrence: readonly (string | number)[],
    about?: { contextId?: string; turnId?: string; traceId?: string },
  ): void;
  emitPlugin(plugin: string, name: string, taskId: string, data: PluginEventData, occurrence: readonly (string | number)[]): void;
}

/** What a progress push is signed and checked with: the deployment's key and its gatekeepers, read when it goes out. */
export interface ProgressPushEnv {
  A2A_SIGNING_KEY?: string;
  GATEKEEPER_ORIGINS?: string;
}

/** Runs a delegating round's subtasks (`SubtaskRunner`). */
export interface RoundSubtasks {
  /** Hands waiting subtasks their answers, runs the unfinished ones; a question one still waits on, if any. `progress` hears them. */
  run(taskId: string, round: number, answers: readonly SubtaskAnswer[], progress?: SubtaskTracking): Promise<SubtaskAsk | undefined>;
}

/** Hears a round's subtasks as they run: their progress trackers (docs/protocol.md "Progress"). */
export interface SubtaskTracking {
  /** Its subagent starts (or resumes) its recipe. */
  started(subtaskId: string): void;
  /** A chunk of its recipe finished: how many have so far, and its name. */
  chunk(subtaskId: string, done: { name: string; finished: number }): void;
  /** It ended, after `chunks` chunks (waiting for a human, or canceled, is not an end). */
  ended(subtaskId: string, status: "completed" | "failed", chunks: number): void;
}

/** Everything a round needs, handed in by whoever runs it. */
export interface LoopDeps {
  /** The stores a round reads and writes: the conversation, the tool journal, requests to a human, rounds and subtasks, usage, the task and its events. */
  db: Pick<AgentDB, "conversations" | "toolCalls" | "hitl" | "subtasks" | "usage" | "tasks" | "events" | "pushConfigs" | "writeProgress">;
  config: AgentConfig;
  policy: AgentPolicy;
  runtime: AgentRuntime;
  /** The system prompt. */
  soul: string;
  /** The models' environment, and what progress pushes are signed and checked with. */
  env: ModelEnv & ProgressPushEnv;
  models?: ModelChoice[];
  events: LoopEvents;
  /** Values no log line may carry (docs/telemetry.md): a model's error can quote its API key. */
  secrets: readonly (string | undefined)[];
  /** Which conversation a task belongs to. */
  conversationOf(task: TaskJson): string;
  /** Writes one chunk of an artifact as an event of the task (the answer as it is written, a tool's artifact whole). */
  appendArtifact(task: Pick<TaskJson, "id" | "contextId">, artifact: ArtifactJson, chunk: { append: boolean; lastChunk: boolean }): void;
  /** Whether someone reads the task's answer as it is written (a stream): the model then streams it. */
  streamFollows(taskId: string): boolean;
  /** Runs delegated subtasks; absent, the agent delegates nothing (the delegate tool is never offered). */
  subtasks?: RoundSubtasks;
}
