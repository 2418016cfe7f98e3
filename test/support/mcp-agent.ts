import type { AgentConfigInput, AgentPolicy } from "@dynamicagents/core/agent";
import { DynamicAgent, type AgentPlugin } from "@dynamicagents/core/host";
import { definePlugin } from "@dynamicagents/core/plugin";
import { mark, markerPolicy } from "./agents.js";

/** What the fixture's `leak` tool returns (test/support/mcp-fixture.mjs): a redactor must replace it. */
export const MCP_LEAK = "canary-secret-mcp-leak-9c2f";

/**
 * Where the specs' MCP servers are (test/support/mcp-fixture.mjs, reached
 * through the pool's outbound service): `docs` needs the bearer token from
 * MCP_TOKEN and its tools are trusted, `gated` trusts only `whoami` (its
 * `lookup` needs an approval for every call), `down` refuses every connection
 * and `slowstart` never answers its handshake.
 */
export const MCP_SERVERS = {
  docs: "https://mcp.test/docs/mcp",
  gated: "https://mcp.test/gated/mcp",
  down: "https://mcp-down.test/mcp",
  slowstart: "https://mcp-slow.test/mcp",
};

const DOCS_TOOLS = ["lookup", "fails", "slow", "leak", "whoami"];

/** An agent with MCP servers from config alone, and a redactor for what their tools return. */
export class McpMarkerAgent extends DynamicAgent<Cloudflare.Env> {
  protected override agentConfig(): AgentConfigInput {
    return {
      mcp: {
        allowlist: ["https://mcp.test", "https://mcp-down.test", "https://mcp-slow.test"],
        servers: [
          { name: "docs", url: MCP_SERVERS.docs, bearerSecret: "MCP_TOKEN", tools: DOCS_TOOLS, trustedTools: DOCS_TOOLS },
          { name: "gated", url: MCP_SERVERS.gated, tools: ["lookup", "whoami"], trustedTools: ["whoami"] },
          { name: "down", url: MCP_SERVERS.down },
          { name: "slowstart", url: MCP_SERVERS.slowstart },
        ],
        connectTimeoutMs: 1_000,
        callTimeoutMs: 30_000,
      },
    };
  }
  protected override agentPlugins(): AgentPlugin[] {
    return [
      definePlugin({
        key: "scrub",
        onToolResult: ({ output }) => (JSON.stringify(output ?? null).includes(MCP_LEAK) ? mark("redacted") : undefined),
      }),
    ];
  }
  protected agentSoul(): string {
    return mark("soul");
  }
  protected agentPolicy(): AgentPolicy {
    return { ...markerPolicy, tools: { mcpUnavailable: (servers) => `${mark("mcp-unavailable")}${servers.join(",")}` } };
  }
  protected override turnWorkflow() {
    const workflow = this.env.MARKER_WORKFLOW;
    if (!workflow) throw new Error("the test worker's marker bindings are missing (vitest.config.ts)");
    return workflow;
  }
}
