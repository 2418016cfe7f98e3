import type { TenantConfig } from "@dynamicagents/core/worker";
import type { Env } from "./env.js";
import { assistantManifest, researcherManifest } from "./manifests.js";

/** The tenants of this deployment; the edge and the turn Workflow read the same map. */
export const tenants: Record<string, TenantConfig<Env>> = {
  assistant: { manifest: assistantManifest, agent: (env) => env.ASSISTANT },
  researcher: { manifest: researcherManifest, agent: (env) => env.RESEARCHER },
};
