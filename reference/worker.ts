import { createA2AWorker } from "@dynamicagents/core/worker";
import type { Env } from "./env.js";
import { deployment } from "./manifests.js";
import { tenants } from "./tenants.js";

export { AssistantAgent, ResearchSubagent, ResearcherAgent } from "./agents.js";
export { ConformanceAgent } from "./conformance/agent.js";
export { TurnWorkflow } from "./turn-workflow.js";

export default createA2AWorker<Env>({ deployment, tenants });
