import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { invalidParams } from "./errors.js";

/**
 * Validates a push config a caller hands us. The agent only ever calls back a
 * gatekeeper it already trusts (exact origin match, so `localhost` and
 * `127.0.0.1` differ): anything else would let a caller aim this Worker's
 * signed requests at an arbitrary host (SSRF).
 */
export function validatePushConfig(
  raw: unknown,
  allowlist: ReadonlySet<string>,
  where = "params.configuration.taskPushNotificationConfig",
): TaskPushNotificationConfig {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidParams(`${where} must be an object with a "url"`);
  }
  const config = TaskPushNotificationConfig.fromJSON(raw);
  if (config.url === "") throw invalidParams(`${where}.url is required`);
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw invalidParams(`${where}.url is not an absolute URL`);
  }
  if (!allowlist.has(url.origin)) {
    throw invalidParams(
      `${where}.url must be on an allowlisted gatekeeper origin; ${JSON.stringify(url.origin)} is not one`,
    );
  }
  if (url.username || url.password) throw invalidParams(`${where}.url must not carry credentials`);
  if (config.authentication && config.authentication.scheme.trim() === "") {
    throw invalidParams(`${where}.authentication.scheme is required when authentication is given`);
  }
  return config;
}
