import type { TenantConfig } from "@dynamicagents/core/worker";
import type { Env } from "./env.js";
import { assistantManifest, conformanceManifest, researcherManifest } from "./manifests.js";

/**
 * The tenants of this deployment; the edge and the turn Workflow read the same
 * map. `conformance` is served only with CONFORMANCE=1 (read per request);
 * the Workflow still finishes a turn it accepted before the variable changed.
 */
export const tenants: Record<string, TenantConfig<Env>> = {
  assistant: { manifest: assistantManifest, agent: (env) => env.ASSISTANT },
  researcher: { manifest: researcherManifest, agent: (env) => env.RESEARCHER },
  conformance: { manifest: conformanceManifest, agent: (env) => env.CONFORMANCE_AGENT, enabled: (env) => env.CONFORMANCE === "1" },
};
