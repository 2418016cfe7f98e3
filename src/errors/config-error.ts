import { DynamicAgentsError } from "./dynamic-agents-error.js";

/** What a configuration error is about. It names the thing, never its value (a secret stays secret). */
export interface ConfigCulprit {
  kind: "setting" | "secret" | "binding" | "plugin" | "policy" | "manifest" | "config";
  /** The setting, secret or binding name, the plugin key, the policy or config field (`turn.maxSteps`), or the manifest (`deployment`, a tenant). */
  name: string;
}

/**
 * Every code a configuration error carries, as keys: `ConfigErrorCode` is
 * their one closed union, so `switch (error.code)` over a `ConfigError` is
 * checked by the compiler. A deployment's own start-up checks add theirs by
 * declaration merging (`declare module "@dynamicagents/core/errors" {
 * interface ConfigErrorCodes { ERR_MY_CHECK: true } }`).
 */
export interface ConfigErrorCodes {
  /** A setting, secret, binding, plugin, policy or manifest is present and wrong. */
  ERR_CONFIG_INVALID: true;
  /** A required setting, secret or binding is absent. */
  ERR_CONFIG_MISSING: true;
  /** An MCP server's URL is not on `mcp.allowlist`. */
  ERR_MCP_NOT_ALLOWLISTED: true;
  /** A plugin declares a subtask type, and the agent names no subagents. */
  ERR_SUBTASKS_WITHOUT_SUBAGENTS: true;
  /** A plugin's store is older than the one the object already holds. */
  ERR_PLUGIN_STORE_DOWNGRADE: true;
  // A plugin set that cannot run (`PluginContractError`):
  ERR_PLUGIN_CONTRACT: true;
  ERR_PLUGIN_CONTRACT_VERSION: true;
  ERR_PLUGIN_DUPLICATE: true;
  ERR_PLUGIN_DUPLICATE_FAMILY: true;
  ERR_PLUGIN_DUPLICATE_SUBTASK_TYPE: true;
  ERR_PLUGIN_REQUIREMENT_MISSING: true;
  ERR_PLUGIN_DUPLICATE_BACKING: true;
  ERR_PLUGIN_DUPLICATE_TOOL: true;
}

export type ConfigErrorCode = keyof ConfigErrorCodes;

/**
 * A start-up check refused the deployment or an agent: a setting, secret,
 * binding, plugin set, policy or manifest is missing or wrong. The server, not
 * the caller, is at fault, so the edge answers it as such and names the
 * culprit.
 */
export class ConfigError extends DynamicAgentsError {
  static override readonly code: ConfigErrorCode = "ERR_CONFIG_INVALID";
  /** A required setting, secret or binding is absent (rather than present and wrong). */
  static readonly MISSING = "ERR_CONFIG_MISSING" satisfies ConfigErrorCode;
  declare readonly code: ConfigErrorCode;
  readonly culprit: ConfigCulprit;

  constructor(culprit: ConfigCulprit, message: string, options?: ErrorOptions & { code?: ConfigErrorCode }) {
    super(message, options);
    this.culprit = { kind: culprit.kind, name: culprit.name };
  }
}
