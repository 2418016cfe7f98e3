import type { AgentNamespace } from "@dynamicagents/core/boundary";
import type { TenantConfig } from "@dynamicagents/core/worker";
import type { Env } from "../../env.js";

// The Worker exports both classes (src/tenants.ts): wrangler.jsonc binds the agent as __BINDING__; the
// subagent is never bound, the runtime makes one per subtask from the Worker's exports (a facet).
export { __Name__Agent, __Name__Subagent } from "./agent.js";

declare module "../../env.js" {
  interface Env {
    /** The __tenant__ tenant's agent: one Durable Object per caller. */
    __BINDING__: AgentNamespace;
  }
}

/**
 * The __tenant__ tenant: its card (GetExtendedAgentCard, what callers read about it) and where its
 * agent lives. The card's words are yours: say what the agent does once its subtasks do it.
 */
const tenant: TenantConfig<Env> = {
  manifest: {
    name: "__Title__",
    description: "__Title__: looks into questions about __words__ by delegating lookups to subagents, then answers from what they found.",
    version: "0.1.0",
    skills: [
      {
        id: "__tenant__",
        name: "__Title__",
        description: "Answers a question about __words__ from lookups it runs in parallel.",
        tags: ["__tenant__", "delegation"],
        examples: ["What do you know about Paris?"],
      },
    ],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
  },
  agent: (env) => env.__BINDING__,
};

export default tenant;
