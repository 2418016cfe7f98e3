export { resolveConfig, type AgentConfig, type AgentConfigInput } from "./config.js";
export { generateWithFallback, type GenerateRequest, type GenerateResult } from "./generate.js";
export type { ModelConfig, ModelEnv } from "./model-config.js";
export { tokenBudgetSpent } from "./token-budget.js";
export {
  validatePolicy,
  type AgentPolicy,
  type DelegateWords,
  type DelegationProblem,
  type HitlOption,
  type HitlWords,
  type InboundFile,
  type PartWords,
  type RoundNotStarted,
  type RoundProgress,
  type RoundWords,
  type ToolWords,
  type WithheldPart,
} from "./policy.js";
export { chooseModels, type ModelChoice } from "./providers.js";
