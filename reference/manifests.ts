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
  // Text, data (read as JSON) and text files (raw, or a URL on FETCH_ALLOWLIST); its models read no images. It answers in text.
  defaultInputModes: ["text/plain", "application/json", "text/*"],
  defaultOutputModes: ["text/plain"],
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
  // As the assistant's: the same turn loop reads the message.
  defaultInputModes: ["text/plain", "application/json", "text/*"],
  defaultOutputModes: ["text/plain"],
};

/**
 * The `conformance` tenant's card: an agent that follows the public A2A
 * conformance suite's scenario conventions (docs/conformance.md). It answers
 * only when the Worker runs with CONFORMANCE=1, and the stub card above does
 * not name it.
 */
export const conformanceManifest: AgentManifest = {
  name: "A2A conformance agent",
  description:
    "A scripted agent for the public A2A conformance suite: the prefix of each message's messageId picks what it does " +
    "(complete, add an artifact, answer with a message, ask for input, reject, stream). It calls no model.",
  version: "0.1.0",
  // Text and data parts in; the suite's own refusal check sends a type outside these (-32005).
  defaultInputModes: ["text/plain", "application/json"],
  defaultOutputModes: ["text/plain", "application/json"],
  skills: [
    {
      id: "conformance-scenarios",
      name: "Conformance scenarios",
      description: "Runs the scenario named by the messageId prefix, as the conformance suite expects; any other message completes.",
      tags: ["conformance", "test"],
    },
  ],
};
