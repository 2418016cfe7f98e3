import { parseOrigin } from "../a2a/gatekeeper-origins.js";
import { ConfigError } from "../a2a/signing-key.js";

const cache = new Map<string, string | ConfigError>();

/**
 * Parses `PUBLIC_ORIGIN` once per isolate: the deployment's one public origin,
 * `https://…` (or `http://` on a loopback host). `undefined` when unset (or
 * empty): the edge then uses each request's own origin, as in local work.
 */
export function loadPublicOrigin(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  let parsed = cache.get(raw);
  if (parsed === undefined) {
    try {
      parsed = parseOrigin(raw.trim(), "PUBLIC_ORIGIN");
    } catch (error) {
      parsed = error as ConfigError;
    }
    cache.set(raw, parsed);
  }
  if (parsed instanceof ConfigError) throw parsed;
  return parsed;
}
