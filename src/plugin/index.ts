export {
  PLUGIN_CONTRACT_VERSION,
  definePlugin,
  type AgentPlugin,
  type PluginHost,
  type PluginStore,
  type SubtaskType,
  type ToolContext,
  type ToolFamily,
  type ToolResultEvent,
  type TurnGateInput,
} from "./contract.js";
export { REDACTION_FAILED_STUB, redactToolResults, redactWith, type ToolResultRedactor } from "./redaction.js";
export { PluginContractError, createAgentRuntime, type AgentRuntime } from "./runtime.js";
export { Workspace, WorkspaceLimitError, memoryWorkspaceBacking, type WorkspaceBacking, type WorkspaceCaps } from "./workspace.js";
