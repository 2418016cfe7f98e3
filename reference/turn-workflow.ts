import { ConfigError } from "@dynamicagents/core/errors";
import type { AgentNamespace } from "@dynamicagents/core/boundary";
import { TurnWorkflowBase } from "@dynamicagents/core/turn";
import type { Env } from "./env.js";
import { tenants } from "./tenants.js";

/** Runs every accepted turn of this deployment durably and delivers it by push. */
export class TurnWorkflow extends TurnWorkflowBase<Env> {
  protected agentNamespace(tenant: string): AgentNamespace {
    const config = tenants[tenant];
    if (!config)
      throw new ConfigError({ kind: "manifest", name: `tenants.${tenant}` }, `turn for unknown tenant ${JSON.stringify(tenant)}`, {
        code: ConfigError.MISSING,
      });
    return config.agent(this.env);
  }
}
