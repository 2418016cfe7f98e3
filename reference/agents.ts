import type { AgentConfigInput } from "@dynamicagents/core/agent";
import { DynamicAgent, type AgentPlugin, type PluginHost } from "@dynamicagents/core/host";
import type { Env } from "./env.js";
import { clockPlugin } from "./plugins/clock.js";
import { webFetchPlugin } from "./plugins/web-fetch.js";

const MODELS: AgentConfigInput["model"] = {
  chatModelId: "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
  fallbackChatModelId: "@cf/meta/llama-3.1-8b-instruct-fast",
};

/** Sites the assistant may read when FETCH_ALLOWLIST (a JSON array of origins) is not set. */
const DEFAULT_FETCH_ALLOWLIST = ["https://developers.cloudflare.com", "https://a2a-protocol.org"];

function fetchAllowlist(raw: string | undefined): string[] {
  if (!raw) return DEFAULT_FETCH_ALLOWLIST;
  const parsed: unknown = JSON.parse(raw);
  if (!Array.isArray(parsed) || !parsed.every((o) => typeof o === "string")) {
    throw new Error("FETCH_ALLOWLIST must be a JSON array of origins");
  }
  return parsed.map((o) => new URL(o).origin);
}

/** The `assistant` tenant: one continuous conversation per caller, answered in a tool loop. */
export class AssistantAgent extends DynamicAgent<Env> {
  protected override agentConfig(): AgentConfigInput {
    return { model: MODELS, turn: { maxSteps: 6 } };
  }

  protected override agentPlugins(host: PluginHost<Env>): AgentPlugin[] {
    return [clockPlugin(), webFetchPlugin({ allowlist: fetchAllowlist(host.env.FETCH_ALLOWLIST) })];
  }

  protected agentSoul(capabilities: string): string {
    return [
      "You are Assistant, a helpful agent reached over the A2A protocol by other agents and their people.",
      "Answer directly and concisely. Use a tool when it gives a better answer than your own knowledge.",
      capabilities,
    ].join("\n\n");
  }
}

/**
 * The `researcher` tenant. Until the delegating round loop lands it answers
 * in the same continuous-session loop, without tools.
 */
export class ResearcherAgent extends DynamicAgent<Env> {
  protected override agentConfig(): AgentConfigInput {
    return { model: MODELS };
  }

  protected agentSoul(capabilities: string): string {
    return ["You are Researcher, an agent reached over the A2A protocol. Answer with a short, well-structured research summary.", capabilities]
      .filter(Boolean)
      .join("\n\n");
  }
}
