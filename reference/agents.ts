import type { AgentConfigInput, AgentPolicy } from "@dynamicagents/core/agent";
import { ConfigError } from "@dynamicagents/core/errors";
import { DynamicAgent, type AgentPlugin, type PluginHost } from "@dynamicagents/core/host";
import type { Subagents } from "@dynamicagents/core/round";
import { RecipeSubagentBase } from "@dynamicagents/core/subagent";
import type { Env } from "./env.js";
import { clockPlugin } from "./plugins/clock.js";
import { notesPlugin } from "./plugins/notes.js";
import { durableWorkspacePlugin } from "./plugins/durable-workspace.js";
import { researchPlugin } from "./plugins/research.js";
import { webFetchPlugin } from "./plugins/web-fetch.js";
import { assistantPolicy, researchPolicy } from "./policy.js";

const MODELS = {
  chatModelId: "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
  fallbackChatModelId: "@cf/meta/llama-3.1-8b-instruct-fast",
} satisfies AgentConfigInput["model"];

/** What the reference keeps (docs/retention.md): a conversation nobody added to in 30 days goes whole; the rest as core's defaults. */
const RETENTION = { conversationIdleDays: 30 } satisfies AgentConfigInput["retention"];

/** Sites the agents may read when FETCH_ALLOWLIST (a JSON array of origins) is not set. */
const DEFAULT_FETCH_ALLOWLIST = ["https://developers.cloudflare.com", "https://a2a-protocol.org"];

function fetchAllowlist(raw: string | undefined): string[] {
  if (!raw) return DEFAULT_FETCH_ALLOWLIST;
  const refuse = () => new ConfigError({ kind: "setting", name: "FETCH_ALLOWLIST" }, "FETCH_ALLOWLIST must be a JSON array of origins");
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw refuse();
  }
  if (!Array.isArray(parsed) || !parsed.every((o) => typeof o === "string" && URL.canParse(o))) throw refuse();
  return parsed.map((o: string) => new URL(o).origin);
}

/** A JSON array from a Worker variable, refused by name when it is not one. */
function jsonArray(raw: string | undefined, setting: string): unknown[] {
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    if (Array.isArray(parsed)) return parsed;
  } catch {
    // refused below
  }
  throw new ConfigError({ kind: "setting", name: setting }, `${setting} must be a JSON array`);
}

/** The assistant's MCP servers: entries of MCP_SERVERS, reachable at the origins of MCP_ALLOWLIST (the config checks both). */
const mcpConfig = (env: Env): AgentConfigInput["mcp"] => ({
  servers: jsonArray(env.MCP_SERVERS, "MCP_SERVERS") as NonNullable<AgentConfigInput["mcp"]>["servers"],
  allowlist: jsonArray(env.MCP_ALLOWLIST, "MCP_ALLOWLIST") as string[],
});

/** The log's lines: two a turn, or one per event with EVENT_LINES=1 (the dev console's timelines read every event). */
const telemetryConfig = (env: Env): AgentConfigInput["telemetry"] => ({ eventLines: env.EVENT_LINES === "1" });

/** The `assistant` tenant: one continuous conversation per caller, answered in a tool loop. */
export class AssistantAgent extends DynamicAgent<Env> {
  protected override agentConfig(): AgentConfigInput {
    // File URLs in a message are read from the same sites as pages.
    return {
      model: MODELS,
      turn: { maxSteps: 6 },
      parts: { fetchAllowlist: fetchAllowlist(this.env.FETCH_ALLOWLIST) },
      mcp: mcpConfig(this.env),
      retention: RETENTION,
      telemetry: telemetryConfig(this.env),
    };
  }

  protected override agentPlugins(host: PluginHost<Env>): AgentPlugin[] {
    return [clockPlugin(), webFetchPlugin({ allowlist: fetchAllowlist(host.env.FETCH_ALLOWLIST) }), notesPlugin(host.storage)];
  }

  protected agentSoul(capabilities: string): string {
    return [
      "You are Assistant, a helpful agent reached over the A2A protocol by other agents and their people.",
      "Answer directly and concisely. Use a tool when it gives a better answer than your own knowledge.",
      "When a request is ambiguous and the answer depends on what the user meant, ask them with ask_user rather than guessing.",
      capabilities,
    ].join("\n\n");
  }

  protected agentPolicy(): AgentPolicy {
    return assistantPolicy;
  }
}

/** The researcher's config and plugins, shared by the agent and the subagents its subtasks run in. */
const researcherConfig = (env: Env): AgentConfigInput => ({
  model: MODELS,
  retention: RETENTION,
  rounds: { maxRounds: 3, maxParallel: 4 },
  parts: { fetchAllowlist: fetchAllowlist(env.FETCH_ALLOWLIST) },
  telemetry: telemetryConfig(env),
});
const researcherPlugins = (env: Env): AgentPlugin[] => [researchPlugin({ allowlist: fetchAllowlist(env.FETCH_ALLOWLIST) }), durableWorkspacePlugin()];

/** The `researcher` tenant: a delegating round loop whose subtasks read pages in subagents. */
export class ResearcherAgent extends DynamicAgent<Env> {
  protected override agentConfig(): AgentConfigInput {
    return researcherConfig(this.env);
  }

  protected override agentPlugins(host: PluginHost<Env>): AgentPlugin[] {
    return researcherPlugins(host.env);
  }

  protected agentSoul(capabilities: string): string {
    return ["You are Researcher, an agent reached over the A2A protocol. You answer with a short, well-sourced research summary.", capabilities].join("\n\n");
  }

  protected agentPolicy(): AgentPolicy {
    return researchPolicy;
  }

  /** It delegates: its subtasks run in research subagents. */
  protected override subagents(): Subagents<Env> {
    return { subagentClass: ResearchSubagent };
  }
}

/** Runs one `read_page` subtask in its own isolate and SQLite, with the researcher's plugins. */
export class ResearchSubagent extends RecipeSubagentBase<Env> {
  protected override agentConfig(): AgentConfigInput {
    return researcherConfig(this.env);
  }

  protected agentPlugins(host: PluginHost<Env>): AgentPlugin[] {
    return researcherPlugins(host.env);
  }
}
