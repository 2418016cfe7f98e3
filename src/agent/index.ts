export { resolveConfig, type AgentConfig, type AgentConfigInput } from "./config.js";
export { generateWithFallback, type GenerateRequest, type GenerateResult } from "./generate.js";
export type { ModelConfig, ModelEnv } from "./model-config.js";
export { chooseModels, type ModelChoice } from "./providers.js";
export { MemorySession, bindSession, isCompactionMessage, type SessionBinding, type SessionLike, type SessionMessage } from "./session.js";
export { runSessionTurn, toModelMessages, tokenBudgetSpent, type SessionTurnInput, type SessionTurnResult } from "./turn-loop.js";
