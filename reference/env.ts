import type { AgentNamespace } from "@dynamicagents/core/boundary";
import type { EdgeEnv } from "@dynamicagents/core/worker";

export interface Env extends EdgeEnv {
  // Typed with the boundary's view of an agent: the edge and the Workflow
  // reach agents only through it, never through the classes.
  ASSISTANT: AgentNamespace;
  RESEARCHER: AgentNamespace;
  /** The `conformance` tenant's agent (reference/conformance/agent.ts); served only with CONFORMANCE=1. */
  CONFORMANCE_AGENT: AgentNamespace;
  TURN_WORKFLOW: Workflow;
  AI: Ai;
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_MODEL?: string;
  OPENAI_FALLBACK_MODEL?: string;
  /** JSON array of origins the assistant and the researcher may read pages from. */
  FETCH_ALLOWLIST?: string;
  /**
   * JSON array of the assistant's MCP servers, each `{ name, url, bearerSecret?, headerSecrets?, tools?, trustedTools? }`
   * (docs/mcp.md): every tool of a server waits for an approval at each call unless `trustedTools` names it.
   */
  MCP_SERVERS?: string;
  /** JSON array of origins MCP servers may be at; a server elsewhere stops the assistant from starting. */
  MCP_ALLOWLIST?: string;
  /** `1` makes the tenant `conformance` known (docs/conformance.md); anything else leaves it unknown. */
  CONFORMANCE?: string;
  /** `1`: the agents log one line per event instead of two a turn (docs/telemetry.md "Which lines"); `npm start` sets it for the dev console. */
  EVENT_LINES?: string;
}
