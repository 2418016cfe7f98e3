import { ConfigError, DynamicAgentsError, type ConfigCulprit } from "../errors/index.js";

/** A plugin set that cannot run: found when the object starts, never mid-request. The culprit names the plugin, secret or binding. */
export class PluginContractError extends ConfigError {
  static override readonly code: string = "ERR_PLUGIN_CONTRACT";

  constructor(culprit: ConfigCulprit, message: string, options?: { code?: string }) {
    super(culprit, message, { code: options?.code ?? PluginContractError.code });
  }
}

/** A workspace write that would break a cap; nothing was written. */
export class WorkspaceLimitError extends DynamicAgentsError {
  static override readonly code: string = "ERR_WORKSPACE_LIMIT";
}

/** A workspace path that does not name a file inside the workspace. */
export class WorkspacePathError extends DynamicAgentsError {
  static override readonly code: string = "ERR_WORKSPACE_PATH";
}
