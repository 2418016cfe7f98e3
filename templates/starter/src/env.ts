import type { EdgeEnv } from "@dynamicagents/core/worker";

/**
 * The Worker's bindings and variables (wrangler.jsonc, .dev.vars, secrets).
 * Each tenant adds its own agent's binding to this interface from its folder
 * (src/tenants/NAME/index.ts), so adding a tenant never edits this file.
 */
export interface Env extends EdgeEnv {
  TURN_WORKFLOW: Workflow;
  AI: Ai;
  /** When set, every model call goes to this OpenAI-compatible endpoint instead of Workers AI. */
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_MODEL?: string;
  OPENAI_FALLBACK_MODEL?: string;
  /** JSON array of MCP servers, for the agents that read it (src/mcp.ts): each `{ name, url, bearerSecret?, trustedTools?, … }`. */
  MCP_SERVERS?: string;
  /** JSON array of the origins those MCP servers may be at; a server elsewhere stops its agent from starting. */
  MCP_ALLOWLIST?: string;
  /** "1": one log line per event, as `npm start` sets for its dev console (src/log-lines.ts); unset, two a turn. */
  EVENT_LINES?: string;
}
