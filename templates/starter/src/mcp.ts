import type { AgentConfigInput } from "@dynamicagents/core";
import { ConfigError } from "@dynamicagents/core/errors";
import type { Env } from "./env.js";

type McpConfig = NonNullable<AgentConfigInput["mcp"]>;

/**
 * An agent's MCP servers, from the Worker's variables, for its `agentConfig()`: `mcp: mcpFromEnv(this.env)`
 * (`npx dynamicagents add-tenant NAME --mcp` writes that). MCP_SERVERS is a JSON array of servers, each
 * `{ name, url, bearerSecret?, headerSecrets?, tools?, trustedTools? }`; MCP_ALLOWLIST a JSON array of the
 * origins they may be at. Unset, none. The agent's config checks both at its start (a server off the
 * allowlist stops it, naming the server). `npm start` sets them to its dev MCP server unless .dev.vars
 * does; the specs to theirs (vitest.config.ts).
 */
export function mcpFromEnv(env: Pick<Env, "MCP_SERVERS" | "MCP_ALLOWLIST">): McpConfig {
  return {
    servers: jsonArray(env.MCP_SERVERS, "MCP_SERVERS") as McpConfig["servers"],
    allowlist: jsonArray(env.MCP_ALLOWLIST, "MCP_ALLOWLIST") as string[],
  };
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
