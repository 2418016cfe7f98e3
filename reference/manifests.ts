import type { AgentManifest } from "@dynamicagents/core/a2a";

/**
 * The stub card at /.well-known/agent-card.json, served exactly as written
 * here: core adds no words, so this says which agents answer and how to call them.
 */
export const deployment: AgentManifest = {
  name: "Dynamic Agents reference deployment",
  description:
    "The reference deployment of @dynamicagents/core: A2A v1.0 agents behind a zero-trust edge. " +
    "Two agents answer at this endpoint, assistant and researcher: name one as params.tenant on every call, " +
    "and GetExtendedAgentCard returns that agent's own signed card. Calls go through a gatekeeper this " +
    "deployment trusts, which signs an EdDSA bearer JWT for each one, addressed to this endpoint (aud) and " +
    "to the agent (the https://dynamicagents.dev/tenant claim).",
  version: "0.1.0",
  skills: [
    {
      id: "agents-here",
      name: "Find the agents here",
      description: "Lists the agents this endpoint hosts; ask GetExtendedAgentCard with params.tenant for the one you want.",
      tags: ["directory"],
    },
  ],
};

export const assistantManifest: AgentManifest = {
  name: "Assistant",
  description: "A general assistant that answers in one inference and can use a few tools.",
  version: "0.1.0",
  skills: [
    {
      id: "answer",
      name: "Answer a question",
      description: "Answers a question or carries out a short request in a single turn.",
      tags: ["chat", "qa"],
      examples: ["What time is it in Tokyo?"],
    },
  ],
};

export const researcherManifest: AgentManifest = {
  name: "Researcher",
  description: "A research agent that splits a question into subtasks, runs them in isolated subagents and writes up the result.",
  version: "0.1.0",
  skills: [
    {
      id: "research",
      name: "Research a topic",
      description: "Decomposes a question into durable subtasks, runs them concurrently and answers from their results.",
      tags: ["research", "delegation"],
      examples: ["Compare the A2A and MCP protocols."],
    },
  ],
};
