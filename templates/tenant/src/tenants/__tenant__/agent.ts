import type { AgentConfigInput, AgentPlugin, AgentPolicy, PluginHost } from "@dynamicagents/core";
import { DynamicAgent } from "@dynamicagents/core/host";
import type { Env } from "../../env.js";
import { logLinesFromEnv } from "../../log-lines.js";
import { policy } from "../../policy.js";
import { __name__Plugin } from "./plugin.js";

/** The __tenant__ tenant's agent: a Durable Object per caller, answering each turn in one tool loop. */
export class __Name__Agent extends DynamicAgent<Env> {
  // Models (with a fallback), budgets and limits; anything left out takes a safe default.
  protected override agentConfig(): AgentConfigInput {
    return {
      model: { chatModelId: "@cf/meta/llama-3.3-70b-instruct-fp8-fast", fallbackChatModelId: "@cf/meta/llama-3.1-8b-instruct-fast" },
      turn: { maxSteps: 4 },
      // Two log lines a turn, or one per event under `npm start` (src/log-lines.ts).
      telemetry: logLinesFromEnv(this.env),
    };
  }

  // What it can do: each plugin brings tools and a sentence saying so (`capabilities` below).
  protected override agentPlugins(_host: PluginHost<Env>): AgentPlugin[] {
    return [__name__Plugin()];
  }

  // Its system prompt: who it is, then what its plugins said it can do.
  protected agentSoul(capabilities: string): string {
    return ["You are __Title__, an agent reached over the A2A protocol. Answer briefly and plainly.", capabilities].join("\n\n");
  }

  // Every other sentence it says (src/policy.ts).
  protected agentPolicy(): AgentPolicy {
    return policy;
  }
}
