import { DynamicAgentsError } from "../errors/index.js";

/** The object's start-up has not run (a constructor, or an RPC racing a failed start). */
export class AgentNotStarted extends DynamicAgentsError {
  static override readonly code: string = "ERR_AGENT_NOT_STARTED";
}

/** This deployment's origin was asked for before any turn told the object what it is. */
export class SelfOriginUnknown extends DynamicAgentsError {
  static override readonly code: string = "ERR_SELF_ORIGIN_UNKNOWN";
}
