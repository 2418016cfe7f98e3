import type { ToolSet } from "ai";
import type { TurnTrace } from "../a2a/trace-context.js";
import type { z } from "zod";
import type { AgentConfig } from "../agent/config.js";
import type { GenerateRequest, GenerateResult } from "../agent/generate.js";
import type { ModelConfig } from "../agent/model-config.js";
import type { HumanAnswer, SubtaskQuestion } from "../boundary/subagent.js";
import type { PartJson } from "../boundary/wire-json.js";
import type { AgentEvent, PluginEventData } from "../telemetry/index.js";
import type { Workspace, WorkspaceBacking, WorkspaceHost } from "./workspace.js";

/**
 * The version of the contract below. Within a version it only grows: new
 * capabilities arrive as optional fields on `AgentPlugin`, never as changed
 * or removed ones. A plugin states the version it was built for; core refuses
 * one from a newer contract, or from before {@link OLDEST_PLUGIN_CONTRACT}, at
 * start-up with a sentence instead of failing later. Version 2 typed the
 * subtask recipe (its `env` comes from the plugin's factory) and hands the
 * workspace backing the storage it lives in. Version 3 gives a recipe the
 * metered model call (`RecipeContext.generate`). Version 4 lets a tool report
 * how far it got (`ToolContext.progress`), a plugin show its calls'
 * arguments and results in progress trackers (`AgentPlugin.progress`), and
 * erases: a store deletes a context's or a caller's rows (`PluginStore.erase`),
 * a tool knows its task's context (`ToolContext.contextId`) and its turn's
 * trace (`ToolContext.trace`); a core before it
 * would keep such a store's rows without a word.
 */
export const PLUGIN_CONTRACT_VERSION = 4;
export const OLDEST_PLUGIN_CONTRACT = 2;

/** What a plugin's code may reach of the agent that installs it. */
export interface PluginHost<Env = unknown> {
  env: Env;
  config: AgentConfig;
  /** The storage of the object the plugin runs in (the caller's, or a subagent's): where its own tables live. */
  storage: DurableObjectStorage;
}

/** An artifact a tool adds to its task: parts in their wire form (`{text}`, `{data}`, `{raw: <base64>}` or `{url}`, with `mediaType`, `filename`). */
export interface NewArtifact {
  name?: string;
  description?: string;
  parts: PartJson[];
  metadata?: Record<string, unknown>;
}

/** What a tool family is handed each turn. */
export interface ToolContext {
  /** The task this turn runs for. */
  taskId: string;
  /** The task's context: what a store records beside its rows, so erasing the context finds them (`PluginStore.erase`). */
  contextId: string;
  /** This deployment's origin. */
  origin: string;
  signal?: AbortSignal;
  /**
   * The turn's trace (docs/telemetry.md "Trace context"): `trace.traceparent()`
   * is a W3C `traceparent` naming a new span of it, for a tool's own request
   * to join the trace when its author chooses. Core adds it to no request a
   * tool makes; a request to a third party that must not learn a caller's
   * trace sends `freshTraceparent()` (`@dynamicagents/core/a2a`), or nothing.
   */
  trace: TurnTrace;
  /**
   * Adds an artifact to the task, from inside a tool's `execute`: streams
   * show it at once and the finished task lists it after the answer, shaped
   * by the client's `acceptedOutputModes`. A journaled call runs once, so a
   * retried step does not add it again. Throws on a malformed artifact, a
   * task no longer running, or past `parts.maxArtifactBytes`.
   */
  addArtifact(artifact: NewArtifact): { artifactId: string };
  /**
   * Emits an event of the plugin's own, `plugin.<key>.<name>`, scoped to the
   * task (docs/telemetry.md). Flat values only, scrubbed of secrets like
   * every event; `occurrence` (stable across a retried step) gives it a
   * stable id, otherwise each call is its own occurrence.
   */
  emit(name: string, data: PluginEventData, occurrence?: string): void;
  /**
   * Reports how far the tool call running it got, from inside its `execute`:
   * its tracker's `progress` and `total` (`total` absent: unknown) and a short
   * `message` of the tool's own, which passes the redactors first
   * (docs/protocol.md "Progress"). Cheap to call often: updates are coalesced
   * to at most two a second, and the last one is kept. Outside a call, or in
   * an agent whose policy has no progress words, it does nothing.
   */
  progress(update: ToolProgress): void;
}

/** How far a tool call got (`ToolContext.progress`). */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * A family's tools for one turn. A family that must reach something first
 * (an MCP server) may resolve them; `note` is a sentence for the model about
 * this turn's tools (which server could not be reached, say), joined to the
 * instructions.
 */
export interface ToolFamilyTurn {
  tools: ToolSet;
  note?: string;
}

export type ToolFamily = (context: ToolContext) => ToolFamilyTurn | Promise<ToolFamilyTurn>;

/**
 * A model call a recipe makes (`RecipeContext.generate`): what
 * `generateWithFallback` takes, less what the subagent supplies (its
 * environment; the agent's model config unless `config` is given).
 */
export type RecipeGenerateRequest = Pick<GenerateRequest, "instructions" | "messages" | "tools" | "activeTools" | "stopWhen" | "models"> & {
  config?: ModelConfig;
};

/** What a subtask's recipe is handed, in the subagent that runs it. */
export interface RecipeContext {
  /**
   * Runs one resumable piece of the recipe. Its result is stored when it
   * finishes; a run resumed after an eviction returns the stored result
   * instead of running it again. Cancellation is checked before each chunk.
   */
  chunk<T>(name: string, run: () => Promise<T>): Promise<T>;
  /**
   * Asks the human behind the parent's task and waits for the answer: the
   * parent's task parks in INPUT_REQUIRED on the question, and the recipe
   * runs again once it is answered (or expired), its chunks replayed, this
   * call returning the answer. `name` keys the answer: keep it stable.
   */
  ask(name: string, question: Omit<SubtaskQuestion, "name">): Promise<HumanAnswer>;
  /**
   * One model exchange with fallback (`generateWithFallback`), metered as the
   * parent's own are: its tokens count in the turn's usage and the caller's
   * daily total, and it is an event of the task. Once the subtask's calls
   * have spent what the turn's budget (`turn.maxTokensPerTurn`) or the
   * caller's daily one left them, a call is refused with `SubtaskOverBudget`,
   * no request made, and the subtask fails. Make it inside a `chunk`, so a
   * resumed run does not make (and pay for) it again.
   */
  generate(request: RecipeGenerateRequest): Promise<GenerateResult>;
  /** The subagent's workspace: the plugins' backing, behind the parent agent's caps. */
  workspace: Workspace;
  /** Which subtask and task this is. */
  subtaskId: string;
  taskId: string;
}

/** A kind of durable subtask a plugin contributes to the round loop. */
export interface SubtaskType<Params extends z.ZodType = z.ZodType> {
  key: string;
  description: string;
  params: Params;
  /** Bumped whenever the recipe's behaviour changes; part of a finished result's fingerprint. */
  recipeVersion?: number;
  /** The subtask's work, in chunks; its return value is the subtask's result. A plugin reaches `env` through its factory's `PluginHost`. */
  recipe(ctx: RecipeContext, params: z.infer<Params>): Promise<unknown>;
}

/** Declares a subtask type with its recipe's params typed from its schema. */
export function defineSubtaskType<Params extends z.ZodType>(type: SubtaskType<Params>): SubtaskType<Params> {
  return type;
}

/**
 * What an erasure covers, as a store is handed it (docs/retention.md): a
 * context and some of its tasks (each call names a batch of them; the last
 * may name none), or the whole caller.
 */
export type ErasureScope = { kind: "context"; contextId: string; taskIds: readonly string[] } | { kind: "caller" };

/** Tables a plugin owns, outside core's migration journal. */
export interface PluginStore {
  /** Names the store's row in `plugin_migrations`. */
  plugin: string;
  version: number;
  /**
   * Idempotent DDL (`CREATE TABLE IF NOT EXISTS …`), run at every start of the
   * object. `fromVersion` is the version last recorded on disk (0 the first
   * time), so an upgrade can branch on it.
   */
  ensureTables(sql: SqlStorage, fromVersion: number): void;
  /**
   * Deletes the store's rows of `scope` (the context's, those of its tasks
   * named, or every row for the caller) and returns how many went; called
   * once or more per erasure, inside core's transaction, so synchronous and
   * idempotent. A store without it is named in the erasure's answer
   * (`unerased`) with its rows: its data is kept, never silently.
   */
  erase?(sql: SqlStorage, scope: ErasureScope): number;
}

export interface TurnGateInput {
  /** The text of the message that opened the task. */
  text: string;
  taskId: string;
}

export interface ToolResultEvent {
  toolName: string;
  input: unknown;
  output: unknown;
}

export interface AgentPlugin {
  key: string;
  /** The contract version this plugin was written against. */
  contractVersion: number;
  subtaskTypes?: SubtaskType[];
  toolFamilies?: Record<string, ToolFamily>;
  /** A sentence or two for the soul: what the agent can do thanks to this plugin. */
  capability?: string;
  requires?: { secrets?: string[]; bindings?: string[] };
  store?: PluginStore;
  /** The storage behind subagents' workspaces (at most one plugin supplies one); built over the subagent's own storage. */
  workspaceBacking?: (host: WorkspaceHost) => WorkspaceBacking;
  /**
   * A context or the caller was erased (after the rows went, the store's
   * included): what the plugin keeps outside its store (a cache, a session
   * on a server) goes too. Best effort; one that throws is logged.
   */
  onErased?: (scope: ErasureScope) => void | Promise<void>;
  /** Raw messages a compaction is about to fold into a summary. Best effort. */
  onMessagesDisplaced?: (messages: unknown[]) => void | Promise<void>;
  /** Whether this turn should run at all; AND-ed across plugins, fails open. */
  shouldHandleTurn?: (input: TurnGateInput) => boolean | Promise<boolean>;
  /**
   * Replaces what the model sees of a tool result (e.g. to redact secrets).
   * Returning `undefined` keeps it. A redactor that throws is replaced by a
   * safe stub: the model never sees an unredacted result because of a bug.
   * It also sees a tool that threw, as `output: { error: <message> }`, and
   * every subtask result the round loop shows the model (`toolName` is the
   * subtask type, `input` its params, `output` its result or `{ error }`).
   */
  onToolResult?: (event: ToolResultEvent) => unknown | Promise<unknown>;
  /**
   * What the trackers of this plugin's tool calls may show besides the
   * agent's words (docs/protocol.md "Progress"): the call's arguments, its
   * result, each only after every redactor (`onToolResult`, failing closed: a
   * redactor that throws shows nothing). Nothing by default.
   */
  progress?: { showArguments?: boolean; showResults?: boolean };
  /**
   * Hears every event of the object it runs in (docs/telemetry.md), the
   * plugins' own included, after the log has it. Never awaited by the turn;
   * a subscriber that throws is logged and changes nothing.
   */
  onEvent?: (event: AgentEvent) => void | Promise<void>;
}

/** Stamps the contract version a plugin is written against. */
export function definePlugin(plugin: Omit<AgentPlugin, "contractVersion"> & { contractVersion?: number }): AgentPlugin {
  return { ...plugin, contractVersion: plugin.contractVersion ?? PLUGIN_CONTRACT_VERSION };
}
