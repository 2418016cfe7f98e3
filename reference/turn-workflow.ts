import { TurnWorkflowBase } from "@dynamicagents/core/turn";
import type { Env } from "./env.js";
import { tenants } from "./tenants.js";

/** Runs every accepted turn of this deployment durably and delivers it by push. */
export class TurnWorkflow extends TurnWorkflowBase<Env> {
  protected agentNamespace(tenant: string): DurableObjectNamespace {
    const config = tenants[tenant];
    if (!config) throw new Error(`turn for unknown tenant ${JSON.stringify(tenant)}`);
    return config.agent(this.env);
  }
}
