import { DynamicAgentsError } from "../errors/index.js";

/** Every code the caller's object's errors carry: one closed union, so `switch (error.code)` over them is checked by the compiler. */
export type HostErrorCode = "ERR_AGENT_NOT_STARTED" | "ERR_SELF_ORIGIN_UNKNOWN";

/** The object's start-up has not run (a constructor, or an RPC racing a failed start). */
export class AgentNotStarted extends DynamicAgentsError {
  static override readonly code = "ERR_AGENT_NOT_STARTED";
  declare readonly code: "ERR_AGENT_NOT_STARTED";
}

/** This deployment's origin was asked for before any turn told the object what it is. */
export class SelfOriginUnknown extends DynamicAgentsError {
  static override readonly code = "ERR_SELF_ORIGIN_UNKNOWN";
  declare readonly code: "ERR_SELF_ORIGIN_UNKNOWN";
}
