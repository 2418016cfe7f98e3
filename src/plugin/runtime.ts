import type { ToolSet } from "ai";
import type { AgentConfig } from "../agent/config.js";
import {
  OLDEST_PLUGIN_CONTRACT,
  PLUGIN_CONTRACT_VERSION,
  type AgentPlugin,
  type ErasureScope,
  type PluginStore,
  type SubtaskType,
  type ToolContext,
  type ToolResultEvent,
  type TurnGateInput,
} from "./contract.js";
import type { PluginEventData } from "../telemetry/index.js";
import { PluginContractError } from "./errors.js";
import { redactToolResults, redactWith, type ToolCallObserver } from "./redaction.js";
import { Workspace, memoryWorkspaceBacking, type WorkspaceHost } from "./workspace.js";

export interface AgentRuntime {
  readonly plugins: readonly AgentPlugin[];
  /** Every plugin's capability sentence, for the soul. */
  readonly capabilities: string;
  readonly subtaskTypes: ReadonlyMap<string, SubtaskType>;
  readonly stores: readonly PluginStore[];
  /** The workspace a subagent's recipe gets: a plugin's backing (or memory) over `host`'s storage, behind the configured caps. */
  workspace(host: WorkspaceHost): Workspace;
  /**
   * Every tool family's tools for one turn, results (and thrown errors)
   * redacted and capped to `tools.maxResultBytes` (`redactToolResults`).
   * Each family's `emit` is bound to its plugin (`context.emit` hears
   * `plugin.<key>.<name>`).
   */
  tools(context: TurnToolContext, options: TurnToolOptions): Promise<TurnTools>;
  /** The values of the secrets the plugins require: what no event may carry. */
  readonly secretValues: readonly string[];
  /**
   * What the model may see of a result: every plugin's `onToolResult` in
   * turn, failing closed to `REDACTION_FAILED_STUB`. The tools above use it,
   * and so does whatever else hands the model a result (subtask results).
   */
  redact(event: ToolResultEvent): Promise<unknown>;
  /** Fans displaced messages out to every listener; one failing never stops another, or the compaction. */
  onMessagesDisplaced(messages: unknown[]): Promise<void>;
  /** Tells every plugin that listens of an erasure; one failing never stops another. */
  onErased(scope: ErasureScope): Promise<void>;
  /** AND of every gate; a gate that throws counts as yes. */
  shouldHandleTurn(input: TurnGateInput): Promise<boolean>;
}

/** A turn's tools from every family, the families' notes for the model, and which plugin each tool is of. */
export interface TurnTools {
  tools: ToolSet;
  notes: string[];
  owners: ReadonlyMap<string, AgentPlugin>;
}

/** How a turn's tool results are handled beyond redaction. */
export interface TurnToolOptions {
  /** Told to the model beside a result cut to `tools.maxResultBytes` (the policy's `messages.toolResultCut`). */
  cutNote: string;
  /** Hears each call's verdict. */
  observe?: ToolCallObserver;
}

/** What the turn hands `tools()`: a tool context whose `emit` names the plugin, bound per family. */
export interface TurnToolContext extends Omit<ToolContext, "emit" | "progress"> {
  emit?: (plugin: string, name: string, data: PluginEventData, occurrence?: string) => void;
  /** Where a tool's progress goes (the loop's tracker of the call running it); absent: nowhere. */
  progress?: ToolContext["progress"];
}

/**
 * Checks a plugin set and assembles what the agent runs with. Called when the
 * Durable Object starts, so a wrong set fails there with one sentence, never
 * in the middle of a request.
 */
export function createAgentRuntime<Env extends object>(options: { plugins: AgentPlugin[]; env: Env; config: AgentConfig }): AgentRuntime {
  const { plugins, config } = options;
  const env = new Map<string, unknown>(Object.entries(options.env));
  const keys = new Set<string>();
  const families = new Map<string, string>();
  const subtaskTypes = new Map<string, SubtaskType>();
  let backingOwner: string | undefined;

  for (const plugin of plugins) {
    if (!plugin.key) throw new PluginContractError({ kind: "plugin", name: "(no key)" }, "A plugin has no key: every plugin needs a unique `key`");
    const name = `Plugin ${JSON.stringify(plugin.key)}`;
    const culprit = { kind: "plugin", name: plugin.key } as const;
    if (plugin.contractVersion > PLUGIN_CONTRACT_VERSION || !(plugin.contractVersion >= OLDEST_PLUGIN_CONTRACT)) {
      throw new PluginContractError(
        culprit,
        `${name} was built for plugin contract version ${plugin.contractVersion}, but this core speaks versions ${OLDEST_PLUGIN_CONTRACT} to ${PLUGIN_CONTRACT_VERSION}: use a plugin release for contract ${PLUGIN_CONTRACT_VERSION}, or a core that speaks ${plugin.contractVersion}`,
        { code: "ERR_PLUGIN_CONTRACT_VERSION" },
      );
    }
    if (keys.has(plugin.key))
      throw new PluginContractError(culprit, `${name} is installed twice: plugin keys must be unique`, { code: "ERR_PLUGIN_DUPLICATE" });
    keys.add(plugin.key);
    for (const family of Object.keys(plugin.toolFamilies ?? {})) {
      const owner = families.get(family);
      if (owner) {
        throw new PluginContractError(
          culprit,
          `${name} declares tool family ${JSON.stringify(family)}, which plugin ${JSON.stringify(owner)} already declares`,
          {
            code: "ERR_PLUGIN_DUPLICATE_FAMILY",
          },
        );
      }
      families.set(family, plugin.key);
    }
    for (const type of plugin.subtaskTypes ?? []) {
      if (subtaskTypes.has(type.key)) {
        throw new PluginContractError(culprit, `${name} declares subtask type ${JSON.stringify(type.key)}, which another plugin already declares`, {
          code: "ERR_PLUGIN_DUPLICATE_SUBTASK_TYPE",
        });
      }
      subtaskTypes.set(type.key, type);
    }
    for (const [kind, names] of [
      ["secret", plugin.requires?.secrets ?? []],
      ["binding", plugin.requires?.bindings ?? []],
    ] as const) {
      for (const required of names) {
        const value = env.get(required);
        if (value === undefined || value === null || value === "") {
          throw new PluginContractError(
            { kind, name: required },
            `${name} requires the ${kind} ${required}, which this Worker does not have: add it to wrangler.jsonc or set it as a secret`,
            { code: "ERR_PLUGIN_REQUIREMENT_MISSING" },
          );
        }
      }
    }
    if (plugin.workspaceBacking) {
      if (backingOwner) {
        throw new PluginContractError(
          culprit,
          `${name} supplies a workspace backing, but plugin ${JSON.stringify(backingOwner)} already does: at most one plugin may`,
          {
            code: "ERR_PLUGIN_DUPLICATE_BACKING",
          },
        );
      }
      backingOwner = plugin.key;
    }
  }

  const backing = plugins.find((p) => p.workspaceBacking)?.workspaceBacking;
  const redactors = plugins.flatMap((p) => (p.onToolResult ? [p.onToolResult] : []));
  const listeners = plugins.flatMap((p) => (p.onMessagesDisplaced ? [{ key: p.key, fn: p.onMessagesDisplaced }] : []));
  const erasureListeners = plugins.flatMap((p) => (p.onErased ? [{ key: p.key, fn: p.onErased }] : []));
  const gates = plugins.flatMap((p) => (p.shouldHandleTurn ? [{ key: p.key, fn: p.shouldHandleTurn }] : []));

  return {
    plugins,
    capabilities: plugins.flatMap((p) => (p.capability ? [p.capability.trim()] : [])).join("\n"),
    subtaskTypes,
    stores: plugins.flatMap((p) => (p.store ? [p.store] : [])),
    workspace: (host) => new Workspace(backing ? backing(host) : memoryWorkspaceBacking(), config.workspace),
    secretValues: plugins
      .flatMap((p) => p.requires?.secrets ?? [])
      .flatMap((name) => {
        const value = env.get(name);
        return typeof value === "string" ? [value] : [];
      }),
    redact: redactWith(redactors),
    async tools(context, { cutNote, observe }) {
      const merged: ToolSet = {};
      const notes: string[] = [];
      const owners = new Map<string, AgentPlugin>();
      // Every family at once: one that waits on a server does not hold up the others.
      const turns = await Promise.all(
        plugins.map((plugin) => {
          const { emit, progress, ...rest } = context;
          const own: ToolContext = {
            ...rest,
            emit: (name, data, occurrence) => emit?.(plugin.key, name, data, occurrence),
            progress: (update) => progress?.(update),
          };
          return Promise.all(Object.values(plugin.toolFamilies ?? {}).map(async (family) => await family(own)));
        }),
      );
      for (const [i, plugin] of plugins.entries()) {
        for (const turn of turns[i]!) {
          if (turn.note?.trim()) notes.push(turn.note.trim());
          for (const [toolName, tool] of Object.entries(turn.tools)) {
            if (merged[toolName]) {
              throw new PluginContractError(culpritOf(plugin), `Two tool families define the tool ${JSON.stringify(toolName)}`, {
                code: "ERR_PLUGIN_DUPLICATE_TOOL",
              });
            }
            merged[toolName] = tool;
            owners.set(toolName, plugin);
          }
        }
      }
      return { tools: redactToolResults(merged, redactors, { cap: { maxBytes: config.tools.maxResultBytes, note: cutNote }, observe }), notes, owners };
    },
    async onMessagesDisplaced(messages) {
      const results = await Promise.allSettled(listeners.map((l) => Promise.resolve().then(() => l.fn(messages))));
      results.forEach((result, i) => {
        if (result.status === "rejected") console.error(`onMessagesDisplaced of plugin ${listeners[i]!.key} failed`, result.reason);
      });
    },
    async onErased(scope) {
      const results = await Promise.allSettled(erasureListeners.map((l) => Promise.resolve().then(() => l.fn(scope))));
      results.forEach((result, i) => {
        if (result.status === "rejected") console.error(`onErased of plugin ${erasureListeners[i]!.key} failed`, result.reason);
      });
    },
    async shouldHandleTurn(input) {
      const answers = await Promise.all(
        gates.map(async (gate) => {
          try {
            return (await gate.fn(input)) !== false;
          } catch (error) {
            // A wrong reply is visible and can be ignored; a wrong silence is not.
            console.error(`shouldHandleTurn of plugin ${gate.key} threw; counting it as yes`, error);
            return true;
          }
        }),
      );
      return answers.every(Boolean);
    },
  };
}

const culpritOf = (plugin: AgentPlugin) => ({ kind: "plugin", name: plugin.key }) as const;
