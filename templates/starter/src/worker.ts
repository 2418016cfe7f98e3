import { createA2AWorker } from "@dynamicagents/core/worker";
import { deployment } from "./deployment.js";
import type { Env } from "./env.js";
import tenants from "./tenants.js";

// The agent class of every tenant: wrangler.jsonc binds each by its class name.
export * from "./tenants.js";
export { TurnWorkflow } from "./turn-workflow.js";

export default createA2AWorker<Env>({ deployment, tenants });
