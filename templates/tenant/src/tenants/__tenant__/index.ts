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

/** The __tenant__ tenant: its card (GetExtendedAgentCard) and where its agent lives. */
const tenant: TenantConfig<Env> = {
  manifest: {
    name: "__Title__",
    description: "An agent that looks things up with its lookup tool and answers in a sentence or two.",
    version: "0.1.0",
    skills: [
      {
        id: "lookup",
        name: "Look something up",
        description: "Looks up what you ask about and answers briefly.",
        tags: ["lookup"],
        examples: ["Look up Paris."],
      },
    ],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
  },
  agent: (env) => env.__BINDING__,
};

export default tenant;
