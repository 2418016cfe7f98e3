import type { EdgeEnv } from "@dynamicagents/core/worker";

export interface Env extends EdgeEnv {
  // Untyped on purpose: the edge and the Workflow only ever reach agents through
  // the structural RPC surfaces core declares, never through the classes.
  ASSISTANT: DurableObjectNamespace;
  RESEARCHER: DurableObjectNamespace;
  TURN_WORKFLOW: Workflow;
  AI: Ai;
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_MODEL?: string;
  OPENAI_FALLBACK_MODEL?: string;
  /** JSON array of origins the assistant may read pages from. */
  FETCH_ALLOWLIST?: string;
}
