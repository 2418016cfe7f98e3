// The package's root: the types a plugin, a config or a policy is written
// against, and nothing else. Type-only, so importing it loads no code and
// pulls no area into a bundle; every value lives in its own subpath
// (`@dynamicagents/core/plugin` for `definePlugin`, and so on).
export type {
  AgentPlugin,
  NewArtifact,
  PluginHost,
  PluginStore,
  RecipeContext,
  RecipeGenerateRequest,
  SubtaskType,
  ToolContext,
  ToolFamily,
  ToolFamilyTurn,
  ToolResultEvent,
  TurnGateInput,
} from "./plugin/contract.js";
export type { ToolResultRedactor } from "./plugin/redaction.js";
export type { WorkspaceBacking, WorkspaceCaps, WorkspaceHost } from "./plugin/workspace.js";
export type { AgentConfig, AgentConfigInput } from "./agent/config.js";
export type { ModelConfig } from "./agent/model-config.js";
export type {
  AgentPolicy,
  DelegateWords,
  DelegationProblem,
  HitlOption,
  HitlWords,
  InboundFile,
  PartWords,
  RoundNotStarted,
  RoundProgress,
  RoundWords,
  ToolWords,
  WithheldPart,
} from "./agent/policy.js";
