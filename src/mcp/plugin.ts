import type { AgentConfig } from "../agent/config.js";
import { definePlugin, type AgentPlugin } from "../plugin/contract.js";
import { credentialedFetch, secretNames } from "./fetch.js";
import { McpServers, type McpClient, type McpServerConfig, type McpServersOptions } from "./servers.js";
import { serverTools } from "./tools.js";

/** The MCP servers' plugin's key: its tools' progress trackers are of kind `mcp:` (docs/protocol.md "Progress"). */
export const MCP_PLUGIN_KEY = "mcp";

/**
 * The MCP servers of an agent's config as a plugin (below), reached through
 * `client` (the object's MCP client) with the credentials `env` holds for
 * them; each server's state changes are `report`ed.
 */
export function mcpServersPlugin(
  client: McpClient,
  options: { config: AgentConfig["mcp"]; env: object; report: McpServersOptions["report"]; unavailable: (servers: string[]) => string },
): AgentPlugin {
  const { config } = options;
  const env = new Map<string, unknown>(Object.entries(options.env));
  const fetch = (server: McpServerConfig) => credentialedFetch(server, { allowlist: config.allowlist, env });
  const connections = new McpServers(client, { config, fetch, report: options.report });
  return mcpPlugin({ servers: config.servers, connections, unavailable: options.unavailable });
}

/**
 * The MCP servers of an agent's config as a plugin: their tools join each
 * turn like any plugin's, so the journal, approvals, redaction, the turn's
 * abort and the events hold for them too. The servers' secrets are the
 * plugin's requirements: a start without one is refused, and no event
 * carries their values.
 */
function mcpPlugin(options: {
  servers: readonly McpServerConfig[];
  connections: McpServers;
  /** The agent's sentence for servers out of reach this turn (its policy's `tools.mcpUnavailable`). */
  unavailable: (servers: string[]) => string;
}): AgentPlugin {
  return definePlugin({
    key: MCP_PLUGIN_KEY,
    requires: { secrets: [...new Set(options.servers.flatMap(secretNames))] },
    // The sessions are the caller's (one per server per object): an erased caller's end. Nothing is kept on disk (servers.ts).
    onErased: (scope) => (scope.kind === "caller" ? options.connections.close() : undefined),
    toolFamilies: {
      mcp: async (context) => {
        const { ready, unavailable } = await options.connections.forTurn();
        return {
          tools: Object.assign({}, ...ready.map(({ server, tools }) => serverTools(server, tools, options.connections, context))),
          note: unavailable.length ? options.unavailable(unavailable) : undefined,
        };
      },
    },
  });
}
