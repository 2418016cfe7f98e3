import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { signCallbackJwt } from "../a2a/callback-jwt.js";
import type { SigningKey } from "../a2a/signing-key.js";

export const A2A_JSON = "application/a2a+json";
const ATTEMPT_TIMEOUT_MS = 15_000;

export class PushRejected extends Error {
  override name = "PushRejected";
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super(`push to ${url} answered HTTP ${status}`);
  }
}

/**
 * One delivery attempt of a StreamResponse to a push config. Throws on a
 * network error, a timeout or a non-2xx answer, so the durable step around it
 * retries with backoff: delivery is at least once.
 */
export async function deliverPush(options: {
  config: unknown;
  /** A v1.0 StreamResponse in wire JSON: `{task}` or `{statusUpdate}`. */
  body: Record<string, unknown>;
  key: SigningKey;
  origin: string;
  fetch?: typeof fetch;
}): Promise<{ status: number }> {
  const config = TaskPushNotificationConfig.fromJSON(options.config);
  const headers: Record<string, string> = { "Content-Type": A2A_JSON };
  // A2A §4.3.3: credentials the client asked for replace our own bearer token.
  if (config.authentication?.scheme) {
    headers.Authorization = `${config.authentication.scheme} ${config.authentication.credentials}`.trim();
  } else {
    headers.Authorization = `Bearer ${await signCallbackJwt({ key: options.key, issuer: options.origin, url: config.url })}`;
  }
  if (config.token) headers["x-a2a-notification-token"] = config.token;
  // Cleared when the attempt settles, unlike `AbortSignal.timeout`, which
  // stays armed for its full period and keeps the isolate busy.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("push timed out", "TimeoutError")), ATTEMPT_TIMEOUT_MS);
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(config.url, {
      method: "POST",
      headers,
      body: JSON.stringify(options.body),
      signal: controller.signal,
      redirect: "manual",
    });
    await response.body?.cancel();
  } finally {
    clearTimeout(timer);
  }
  if (response.status < 200 || response.status > 299) throw new PushRejected(config.url, response.status);
  return { status: response.status };
}
