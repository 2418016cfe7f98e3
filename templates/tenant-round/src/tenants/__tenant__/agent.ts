import type { AgentConfigInput, AgentPlugin, AgentPolicy, PluginHost } from "@dynamicagents/core";
import { DynamicAgent } from "@dynamicagents/core/host";
import type { Subagents } from "@dynamicagents/core/round";
import { RecipeSubagentBase } from "@dynamicagents/core/subagent";
import type { Env } from "../../env.js";
import { logLinesFromEnv } from "../../log-lines.js";
import { __name__Plugin } from "./plugin.js";
import { __name__Policy } from "./policy.js";

// The agent and the subagents its subtasks run in share one config and one set of plugins: the
// subagent finds the subtask types (and their recipes) in the same plugins, under the same caps.
const config: AgentConfigInput = {
  model: { chatModelId: "@cf/meta/llama-3.3-70b-instruct-fp8-fast", fallbackChatModelId: "@cf/meta/llama-3.1-8b-instruct-fast" },
  // At most three rounds: delegate, read the results (delegate again if need be), answer.
  rounds: { maxRounds: 3, maxParallel: 4 },
};
const plugins = (): AgentPlugin[] => [__name__Plugin()];

/** The __tenant__ tenant's agent: each turn runs in rounds; a round may delegate subtasks, the next reads their results. */
export class __Name__Agent extends DynamicAgent<Env> {
  protected override agentConfig(): AgentConfigInput {
    return { ...config, telemetry: logLinesFromEnv(this.env) };
  }

  protected override agentPlugins(_host: PluginHost<Env>): AgentPlugin[] {
    return plugins();
  }

  protected agentSoul(capabilities: string): string {
    return ["You are __Title__, an agent reached over the A2A protocol. Answer briefly and plainly, from what your subtasks found.", capabilities].join("\n\n");
  }

  // Its words: the shared ones and the round loop's (./policy.ts).
  protected agentPolicy(): AgentPolicy {
    return __name__Policy;
  }

  // It delegates: each subtask runs in a __Name__Subagent. The Worker exports that class (./index.ts), and
  // vitest.config.ts lists it in additionalExports, without which the specs' runtime cannot find it.
  protected override subagents(): Subagents<Env> {
    return { subagentClass: __Name__Subagent };
  }
}

/** Runs one subtask of the __tenant__ agent in its own isolate and storage, with the agent's plugins. */
export class __Name__Subagent extends RecipeSubagentBase<Env> {
  protected override agentConfig(): AgentConfigInput {
    return config;
  }

  protected agentPlugins(_host: PluginHost<Env>): AgentPlugin[] {
    return plugins();
  }
}
