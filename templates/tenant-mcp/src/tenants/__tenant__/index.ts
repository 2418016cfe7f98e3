import type { AgentNamespace } from "@dynamicagents/core/boundary";
import type { TenantConfig } from "@dynamicagents/core/worker";
import type { Env } from "../../env.js";

// The Worker exports the class (src/tenants.ts); wrangler.jsonc binds it as __BINDING__.
export { __Name__Agent } from "./agent.js";

declare module "../../env.js" {
  interface Env {
    /** The __tenant__ tenant's agent: one Durable Object per caller. */
    __BINDING__: AgentNamespace;
  }
}

/**
 * The __tenant__ tenant: its card (GetExtendedAgentCard, what callers read about it) and where its
 * agent lives. The card's words are yours: say what the agent does once its MCP tools do it.
 */
const tenant: TenantConfig<Env> = {
  manifest: {
    name: "__Title__",
    description: "__Title__: answers questions about __words__ in a sentence or two, with the tools of its MCP servers.",
    version: "0.1.0",
    skills: [
      {
        id: "__tenant__",
        name: "__Title__",
        description: "Answers a question about __words__.",
        tags: ["__tenant__", "mcp"],
        examples: ["What do you know about Paris?"],
      },
    ],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
  },
  agent: (env) => env.__BINDING__,
};

export default tenant;
