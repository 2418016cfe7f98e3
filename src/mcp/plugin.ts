import { definePlugin, type AgentPlugin } from "../plugin/contract.js";
import { secretNames } from "./fetch.js";
import type { McpServerConfig, McpServers } from "./servers.js";
import { serverTools } from "./tools.js";

/**
 * The MCP servers of an agent's config as a plugin: their tools join each
 * turn like any plugin's, so the journal, approvals, redaction, the turn's
 * abort and the events hold for them too. The servers' secrets are the
 * plugin's requirements: a start without one is refused, and no event
 * carries their values.
 */
export function mcpPlugin(options: {
  servers: readonly McpServerConfig[];
  connections: McpServers;
  /** The agent's sentence for servers out of reach this turn (its policy's `tools.mcpUnavailable`). */
  unavailable: (servers: string[]) => string;
}): AgentPlugin {
  return definePlugin({
    key: "mcp",
    requires: { secrets: [...new Set(options.servers.flatMap(secretNames))] },
    toolFamilies: {
      mcp: async () => {
        const { ready, unavailable } = await options.connections.forTurn();
        return {
          tools: Object.assign({}, ...ready.map(({ server, tools }) => serverTools(server, tools, options.connections))),
          note: unavailable.length ? options.unavailable(unavailable) : undefined,
        };
      },
    },
  });
}
