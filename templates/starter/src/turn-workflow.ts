import type { AgentNamespace } from "@dynamicagents/core/boundary";
import { ConfigError } from "@dynamicagents/core/errors";
import { TurnWorkflowBase } from "@dynamicagents/core/turn";
import type { Env } from "./env.js";
import tenants from "./tenants.js";

/** Runs every accepted turn durably and delivers its answer by push; it finds the tenant's agent in the registry. */
export class TurnWorkflow extends TurnWorkflowBase<Env> {
  protected agentNamespace(tenant: string): AgentNamespace {
    const config = tenants[tenant];
    if (!config) throw new ConfigError({ kind: "manifest", name: `tenants.${tenant}` }, `turn for unknown tenant ${JSON.stringify(tenant)}`);
    return config.agent(this.env);
  }
}
