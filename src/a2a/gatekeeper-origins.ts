import { ConfigError, type ConfigCulprit } from "../errors/index.js";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export const isLoopbackHost = (hostname: string) => LOOPBACK_HOSTS.has(hostname);

const GATEKEEPER_ORIGINS: ConfigCulprit = { kind: "setting", name: "GATEKEEPER_ORIGINS" };

const cache = new Map<string, ReadonlySet<string> | ConfigError>();

/**
 * Parses `GATEKEEPER_ORIGINS` (a JSON array of origins) once per isolate.
 * Entries are compared as exact origins afterwards, so each one is checked
 * here to *be* an origin: `https://…`, or `http://…` on a loopback host only.
 */
export function loadGatekeeperOrigins(raw: string | undefined): ReadonlySet<string> {
  if (raw === undefined || raw.trim() === "") {
    throw new ConfigError(
      GATEKEEPER_ORIGINS,
      'GATEKEEPER_ORIGINS is not set: it must be a JSON array of the gatekeeper origins this agent accepts calls from, e.g. ["https://gatekeeper.example.com"]',
      { code: ConfigError.MISSING },
    );
  }
  let parsed = cache.get(raw);
  if (!parsed) {
    try {
      parsed = parseOrigins(raw);
    } catch (error) {
      parsed = error as ConfigError;
    }
    cache.set(raw, parsed);
  }
  if (parsed instanceof ConfigError) throw parsed;
  return parsed;
}

function parseOrigins(raw: string): ReadonlySet<string> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError(
      GATEKEEPER_ORIGINS,
      `GATEKEEPER_ORIGINS is not JSON: write a JSON array such as ["https://gatekeeper.example.com"], got ${JSON.stringify(raw)}`,
    );
  }
  if (!Array.isArray(value) || value.length === 0) {
    throw new ConfigError(GATEKEEPER_ORIGINS, "GATEKEEPER_ORIGINS must be a non-empty JSON array of origins: with none, every call would be refused");
  }
  const origins = new Set<string>();
  for (const entry of value) {
    if (typeof entry !== "string") {
      throw new ConfigError(GATEKEEPER_ORIGINS, `GATEKEEPER_ORIGINS entries must be strings, got ${JSON.stringify(entry)}`);
    }
    origins.add(parseOrigin(entry, "GATEKEEPER_ORIGINS entry", GATEKEEPER_ORIGINS));
  }
  return origins;
}

/**
 * Checks that a configured value *is* an origin (it is compared exactly
 * afterwards); `label` names it in the error's message, e.g. "PUBLIC_ORIGIN".
 */
export function parseOrigin(entry: string, label: string, culprit: ConfigCulprit): string {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new ConfigError(culprit, `${label} ${JSON.stringify(entry)} is not an absolute URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(culprit, `${label} ${JSON.stringify(entry)} must use https://`);
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    throw new ConfigError(culprit, `${label} ${JSON.stringify(entry)} uses http:// on a non-loopback host: only 127.0.0.1, localhost and [::1] may use http`);
  }
  // A bare trailing slash is how many people write an origin; anything more
  // (a path, a query, credentials) means the operator meant something else.
  if (url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) {
    throw new ConfigError(
      culprit,
      `${label} ${JSON.stringify(entry)} is not an origin: write it as ${JSON.stringify(url.origin)} (no path, query or credentials)`,
    );
  }
  return url.origin;
}
