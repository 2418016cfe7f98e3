import type { AgentManifest } from "@dynamicagents/core/a2a";

/**
 * The stub card at /.well-known/agent-card.json, served exactly as written: it
 * names no tenant, so say here which agents answer and how to reach them.
 */
export const deployment: AgentManifest = {
  name: "__worker__",
  description:
    "A2A agents behind one endpoint. Name the agent you want as params.tenant on every call; " +
    "GetExtendedAgentCard returns that agent's own signed card. Calls come through a gatekeeper this deployment trusts.",
  version: "0.1.0",
  skills: [
    {
      id: "directory",
      name: "Find an agent",
      description: "Ask GetExtendedAgentCard with params.tenant for the card of the agent you want to call.",
      tags: ["directory"],
    },
  ],
};
