export { generateWithFallback, type GenerateRequest, type GenerateResult } from "./generate.js";
export type { ModelConfig, ModelEnv } from "./model-config.js";
export { chooseModels, type ModelChoice } from "./providers.js";
