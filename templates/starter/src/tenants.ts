// The tenant registry: every tenant this Worker serves, by the name callers put
// in params.tenant. The edge, the turn Workflow and the specs read this one map.
// `npx dynamicagents add-tenant NAME` adds a tenant here: an import of its
// registration, an `export *` of its agent class (src/worker.ts exports them
// all, for wrangler.jsonc to bind), and its entry in the map.
import type { TenantConfig } from "@dynamicagents/core/worker";
import type { Env } from "./env.js";

const tenants: Record<string, TenantConfig<Env>> = {};

export default tenants;
