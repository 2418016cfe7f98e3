import type { AgentConfigInput } from "@dynamicagents/core/agent";
import { DynamicAgent, type AgentPlugin, type PluginHost } from "@dynamicagents/core/host";
import type { SubtaskType } from "@dynamicagents/core/plugin";
import { RoundAgentBase, type RoundPolicy, type SubagentClass } from "@dynamicagents/core/round";
import { RecipeSubagentBase } from "@dynamicagents/core/subagent";
import type { Env } from "./env.js";
import { clockPlugin } from "./plugins/clock.js";
import { researchPlugin } from "./plugins/research.js";
import { webFetchPlugin } from "./plugins/web-fetch.js";
import { researchPolicy } from "./research-policy.js";

const MODELS = {
  chatModelId: "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
  fallbackChatModelId: "@cf/meta/llama-3.1-8b-instruct-fast",
} satisfies AgentConfigInput["model"];

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

const research = (env: Env) => researchPlugin({ allowlist: fetchAllowlist(env.FETCH_ALLOWLIST), models: MODELS });

/** The `researcher` tenant: a delegating round loop whose subtasks read pages in subagents. */
export class ResearcherAgent extends RoundAgentBase<Env> {
  protected override agentConfig(): AgentConfigInput {
    return { model: MODELS, rounds: { maxRounds: 3, maxParallel: 4 } };
  }

  protected override agentPlugins(host: PluginHost<Env>): AgentPlugin[] {
    return [research(host.env)];
  }

  protected agentSoul(capabilities: string): string {
    return ["You are Researcher, an agent reached over the A2A protocol. You answer with a short, well-sourced research summary.", capabilities].join(
      "\n\n",
    );
  }

  protected roundPolicy(): RoundPolicy {
    return researchPolicy;
  }

  protected subagentClass(): SubagentClass {
    return ResearchSubagent as unknown as SubagentClass;
  }
}

/** Runs one `read_page` subtask in its own isolate and SQLite. */
export class ResearchSubagent extends RecipeSubagentBase<Env> {
  protected subtaskTypes(): SubtaskType[] {
    return research(this.env).subtaskTypes ?? [];
  }
}
