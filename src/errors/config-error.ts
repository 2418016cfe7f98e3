import { DynamicAgentsError } from "./dynamic-agents-error.js";

/** What a configuration error is about. It names the thing, never its value (a secret stays secret). */
export interface ConfigCulprit {
  kind: "setting" | "secret" | "binding" | "plugin" | "policy" | "manifest" | "config";
  /** The setting, secret or binding name, the plugin key, the policy or config field (`turn.maxSteps`), or the manifest (`deployment`, a tenant). */
  name: string;
}

/**
 * A start-up check refused the deployment or an agent: a setting, secret,
 * binding, plugin set, policy or manifest is missing or wrong. The server, not
 * the caller, is at fault, so the edge answers it as such and names the
 * culprit.
 */
export class ConfigError extends DynamicAgentsError {
  static override readonly code: string = "ERR_CONFIG_INVALID";
  /** A required setting, secret or binding is absent (rather than present and wrong). */
  static readonly MISSING = "ERR_CONFIG_MISSING";
  readonly culprit: ConfigCulprit;

  constructor(culprit: ConfigCulprit, message: string, options?: ErrorOptions & { code?: string }) {
    super(message, options);
    this.culprit = { kind: culprit.kind, name: culprit.name };
  }
}
