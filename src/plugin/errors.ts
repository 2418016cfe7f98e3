import { ConfigError, DynamicAgentsError, type ConfigCulprit } from "../errors/index.js";

/** The codes of a plugin set that cannot run (each also a `ConfigErrorCode`). */
type PluginContractCode =
  | "ERR_PLUGIN_CONTRACT"
  | "ERR_PLUGIN_CONTRACT_VERSION"
  | "ERR_PLUGIN_DUPLICATE"
  | "ERR_PLUGIN_DUPLICATE_FAMILY"
  | "ERR_PLUGIN_DUPLICATE_SUBTASK_TYPE"
  | "ERR_PLUGIN_REQUIREMENT_MISSING"
  | "ERR_PLUGIN_DUPLICATE_BACKING"
  | "ERR_PLUGIN_DUPLICATE_TOOL";

/** Every code the plugin area's errors carry: one closed union, so `switch (error.code)` over them is checked by the compiler. */
export type PluginErrorCode = PluginContractCode | "ERR_WORKSPACE_LIMIT" | "ERR_WORKSPACE_PATH";

/** A plugin set that cannot run: found when the object starts, never mid-request. The culprit names the plugin, secret or binding. */
export class PluginContractError extends ConfigError {
  static override readonly code: PluginContractCode = "ERR_PLUGIN_CONTRACT";
  declare readonly code: PluginContractCode;

  constructor(culprit: ConfigCulprit, message: string, options?: { code?: PluginContractCode }) {
    super(culprit, message, { code: options?.code ?? PluginContractError.code });
  }
}

/** A workspace write that would break a cap; nothing was written. */
export class WorkspaceLimitError extends DynamicAgentsError {
  static override readonly code = "ERR_WORKSPACE_LIMIT";
  declare readonly code: "ERR_WORKSPACE_LIMIT";
}

/** A workspace path that does not name a file inside the workspace. */
export class WorkspacePathError extends DynamicAgentsError {
  static override readonly code = "ERR_WORKSPACE_PATH";
  declare readonly code: "ERR_WORKSPACE_PATH";
}
