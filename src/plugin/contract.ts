import type { ToolSet } from "ai";
import type { z } from "zod";
import type { AgentConfig } from "../agent/config.js";
import type { WorkspaceBacking } from "./workspace.js";

/**
 * The version of the contract below. It only ever grows: new capabilities
 * arrive as optional fields on `AgentPlugin`, never as changed or removed
 * ones, so a plugin built against version N works on every core that speaks
 * N. A plugin states the version it was built for; core refuses a plugin from
 * a newer contract at start-up with a sentence instead of failing later.
 */
export const PLUGIN_CONTRACT_VERSION = 1;

/** What a plugin's code may reach of the agent that installs it. */
export interface PluginHost<Env = unknown> {
  env: Env;
  config: AgentConfig;
}

/** What a tool family is handed each turn. */
export interface ToolContext {
  /** The task this turn runs for. */
  taskId: string;
  /** This deployment's origin. */
  origin: string;
  signal?: AbortSignal;
}

export type ToolFamily = (context: ToolContext) => { tools: ToolSet };

/** A kind of durable subtask a plugin contributes to the round loop. */
export interface SubtaskType<Params extends z.ZodType = z.ZodType> {
  key: string;
  description: string;
  params: Params;
  /** Bumped whenever the recipe's behaviour changes; part of a finished result's fingerprint. */
  recipeVersion?: number;
  recipe: unknown;
}

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
  workspaceBacking?: () => WorkspaceBacking;
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
}

/** Stamps the contract version a plugin is written against. */
export function definePlugin(plugin: Omit<AgentPlugin, "contractVersion"> & { contractVersion?: number }): AgentPlugin {
  return { ...plugin, contractVersion: plugin.contractVersion ?? PLUGIN_CONTRACT_VERSION };
}
