export { DynamicAgent } from "./dynamic-agent.js";
export { AgentNotStarted, SelfOriginUnknown, type HostErrorCode } from "./errors.js";
export { DEFAULT_RECOVERY_POLICY, type RecoveryPolicy } from "./recovery-policy.js";
export type { AgentEnv } from "./lifecycle.js";
export type { TurnContext } from "../round/deps.js";
export type { AgentPlugin, PluginHost } from "../plugin/contract.js";
export type { AgentPolicy } from "../agent/policy.js";
