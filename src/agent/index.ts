export { resolveConfig, type AgentConfig, type AgentConfigInput } from "./config.js";
export { generateWithFallback, type GenerateRequest, type GenerateResult } from "./generate.js";
export type { ModelConfig, ModelEnv } from "./model-config.js";
export { toModelMessages, tokenBudgetSpent } from "./model-messages.js";
export { validatePolicy, type AgentPolicy, type DelegateWords, type DelegationProblem, type RoundProgress, type RoundWords } from "./policy.js";
export { chooseModels, type ModelChoice } from "./providers.js";
export { MemorySession, bindSession, isCompactionMessage, type SessionBinding, type SessionLike, type SessionMessage } from "./session.js";
