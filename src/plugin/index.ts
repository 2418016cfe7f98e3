export {
  PLUGIN_CONTRACT_VERSION,
  definePlugin,
  defineSubtaskType,
  type AgentPlugin,
  type ErasureScope,
  type NewArtifact,
  type PluginHost,
  type PluginStore,
  type RecipeContext,
  type RecipeGenerateRequest,
  type SubtaskType,
  type ToolContext,
  type ToolFamily,
  type ToolFamilyTurn,
  type ToolProgress,
  type ToolResultEvent,
  type TurnGateInput,
} from "./contract.js";
export { PluginContractError, WorkspaceLimitError, WorkspacePathError, type PluginErrorCode } from "./errors.js";
export { REDACTION_FAILED_STUB, redactToolResults, redactWith, type ToolCallObserver, type ToolCallVerdict, type ToolResultRedactor } from "./redaction.js";
export { readCapped } from "./read-capped.js";
export type { ResultCap } from "./result-cap.js";
export { createAgentRuntime, type AgentRuntime, type TurnToolOptions, type TurnTools } from "./runtime.js";
export { Workspace, memoryWorkspaceBacking, type WorkspaceBacking, type WorkspaceCaps, type WorkspaceHost } from "./workspace.js";
