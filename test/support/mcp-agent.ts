import type { AgentConfigInput, AgentPolicy } from "@dynamicagents/core/agent";
import { DynamicAgent, type AgentPlugin } from "@dynamicagents/core/host";
import { definePlugin } from "@dynamicagents/core/plugin";
import { tool } from "ai";
import { z } from "zod";
import { EVERY_LINE, mark, markerPolicy } from "./agents.js";

/** What the fixture's `leak` tool returns (test/support/mcp-fixture.mjs): a redactor must replace it. */
export const MCP_LEAK = "canary-secret-mcp-leak-9c2f";
/** The secret the fixture's `straddle` tool repeats where a cap cuts (test/support/mcp-fixture.mjs): a redactor replaces each copy. */
export const STRADDLE_SECRET = "Q".repeat(40);

/**
 * Where the specs' MCP servers are (test/support/mcp-fixture.mjs, reached
 * through the pool's outbound service): `docs` needs the bearer token from
 * MCP_TOKEN and its tools are trusted, `gated` trusts only `whoami` (its
 * `lookup` needs an approval for every call), `bulk` returns results of about
 * 3 MB, `down` refuses every connection and `slowstart` never answers its
 * handshake.
 */
export const MCP_SERVERS = {
  docs: "https://mcp.test/docs/mcp",
  gated: "https://mcp.test/gated/mcp",
  bulk: "https://mcp.test/bulk/mcp",
  down: "https://mcp-down.test/mcp",
  slowstart: "https://mcp-slow.test/mcp",
};

const DOCS_TOOLS = ["lookup", "fails", "slow", "leak", "steps", "whoami"];
const BULK_TOOLS = ["huge_structured", "huge_blocks", "many_blocks", "straddle"];

/** A plugin tool whose result is about 3 MB: the cap holds for plugins' tools as for MCP servers'. */
const bulkPlugin = definePlugin({
  key: "bulk",
  toolFamilies: {
    bulk: () => ({
      tools: {
        bulk_rows: tool({
          description: mark("bulk-rows"),
          inputSchema: z.object({}),
          execute: async () => ({ rows: Array.from({ length: 30_000 }, (_, id) => ({ id, text: "x".repeat(90) })) }),
        }),
      },
    }),
  },
});

/** An agent with MCP servers from config alone, a plugin tool with a huge result, and a redactor for what the tools return. */
export class McpMarkerAgent extends DynamicAgent<Cloudflare.Env> {
  protected override agentConfig(): AgentConfigInput {
    return {
      telemetry: EVERY_LINE,
      mcp: {
        allowlist: ["https://mcp.test", "https://mcp-down.test", "https://mcp-slow.test"],
        servers: [
          { name: "docs", url: MCP_SERVERS.docs, bearerSecret: "MCP_TOKEN", tools: DOCS_TOOLS, trustedTools: DOCS_TOOLS },
          { name: "gated", url: MCP_SERVERS.gated, tools: ["lookup", "whoami"], trustedTools: ["whoami"] },
          { name: "bulk", url: MCP_SERVERS.bulk, tools: BULK_TOOLS, trustedTools: BULK_TOOLS },
          { name: "down", url: MCP_SERVERS.down },
          { name: "slowstart", url: MCP_SERVERS.slowstart },
        ],
        connectTimeoutMs: 1_000,
        callTimeoutMs: 30_000,
      },
      // A file a message names by URL is fetched from here (test/trace.spec.ts: with a trace of its own).
      parts: { fetchAllowlist: ["https://files.test"] },
    };
  }
  protected override agentPlugins(): AgentPlugin[] {
    return [
      bulkPlugin,
      definePlugin({
        key: "scrub",
        onToolResult: ({ output }) => {
          const json = JSON.stringify(output ?? null);
          if (json.includes(MCP_LEAK)) return mark("redacted");
          // Each whole copy replaced, as a redactor matching a credential's full shape does: a cut one would stay.
          return json.includes(STRADDLE_SECRET) ? JSON.parse(json.replaceAll(STRADDLE_SECRET, mark("redacted"))) : undefined;
        },
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
