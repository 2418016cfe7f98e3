import { createA2AWorker } from "@dynamicagents/core/worker";
import type { Env } from "./env.js";
import { assistantManifest, deployment, researcherManifest } from "./manifests.js";

export { AssistantAgent, ResearcherAgent } from "./agents.js";

export default createA2AWorker<Env>({
  deployment,
  tenants: {
    assistant: { manifest: assistantManifest, agent: (env) => env.ASSISTANT },
    researcher: { manifest: researcherManifest, agent: (env) => env.RESEARCHER },
  },
});
