import type { AgentConfigInput, AgentPlugin, AgentPolicy, PluginHost } from "@dynamicagents/core";
import { DynamicAgent } from "@dynamicagents/core/host";
import type { Env } from "../../env.js";
import { logLinesFromEnv } from "../../log-lines.js";
import { mcpFromEnv } from "../../mcp.js";
import { policy } from "../../policy.js";

/** The __tenant__ tenant's agent: a Durable Object per caller, answering each turn with the tools of its MCP servers. */
export class __Name__Agent extends DynamicAgent<Env> {
  // Models (with a fallback), budgets and limits; anything left out takes a safe default.
  protected override agentConfig(): AgentConfigInput {
    return {
      model: { chatModelId: "@cf/meta/llama-3.3-70b-instruct-fp8-fast", fallbackChatModelId: "@cf/meta/llama-3.1-8b-instruct-fast" },
      turn: { maxSteps: 4 },
      // Its MCP servers: MCP_SERVERS and MCP_ALLOWLIST (src/mcp.ts). Their tools reach the model as <server>__<tool>;
      // each waits for a human's approval at every call unless the server's trustedTools names it.
      mcp: mcpFromEnv(this.env),
      telemetry: logLinesFromEnv(this.env),
    };
  }

  // Tools of its own besides the MCP servers' (a plugin, as `add-tenant` writes for a plain tenant): none yet.
  protected override agentPlugins(_host: PluginHost<Env>): AgentPlugin[] {
    return [];
  }

  protected agentSoul(capabilities: string): string {
    return ["You are __Title__, an agent reached over the A2A protocol. Answer briefly and plainly; use your tools to find out.", capabilities].join("\n\n");
  }

  // Every other sentence it says (src/policy.ts), `tools.mcpUnavailable` among them.
  protected agentPolicy(): AgentPolicy {
    return policy;
  }
}
