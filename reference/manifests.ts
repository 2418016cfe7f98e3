import type { AgentManifest } from "@dynamicagents/core/a2a";

export const deployment = {
  name: "Dynamic Agents reference deployment",
  description: "The reference deployment of @dynamicagents/core: A2A v1.0 agents behind a zero-trust edge.",
  version: "0.1.0",
} as const;

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
