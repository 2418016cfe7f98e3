import type { EdgeEnv } from "@dynamicagents/core/worker";
import type { AssistantAgent, ResearcherAgent } from "./agents.js";

export interface Env extends EdgeEnv {
  ASSISTANT: DurableObjectNamespace<AssistantAgent>;
  RESEARCHER: DurableObjectNamespace<ResearcherAgent>;
  TURN_WORKFLOW: Workflow;
  AI: Ai;
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_MODEL?: string;
  OPENAI_FALLBACK_MODEL?: string;
  /** JSON array of origins the assistant may read pages from. */
  FETCH_ALLOWLIST?: string;
}
