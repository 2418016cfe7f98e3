import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { JWKS_PATH } from "./wire.js";

export interface GatekeeperJwksOptions {
  /**
   * Minimum time between two fetches of one gatekeeper's JWKS. An unknown
   * `kid` refetches only once this has passed since the last fetch, so a
   * rotated key is accepted within this many milliseconds while a stream of
   * forged `kid`s cannot turn this Worker into a request amplifier. Default 5 s.
   */
  cooldownMs?: number;
  /** A key set older than this is refetched before use, so a removed key is refused within it. Default 10 minutes. */
  maxAgeMs?: number;
  /** Per-fetch timeout. Default 5 s. */
  timeoutMs?: number;
  /** Gatekeepers whose key sets are kept; the least recently used is dropped beyond this. Default 32. */
  maxEntries?: number;
  /** The clock, in milliseconds; injected by tests. */
  now?: () => number;
}

/** The gatekeeper's JWKS could not be used: unreachable, not 200, not a JWKS, or refetched too recently. */
export class GatekeeperJwksUnavailable extends errors.JOSEError {
  static override code = "ERR_GATEKEEPER_JWKS_UNAVAILABLE";
  override readonly code = "ERR_GATEKEEPER_JWKS_UNAVAILABLE";
  override name = "GatekeeperJwksUnavailable";
}

interface Entry {
  url: string;
  select?: JWTVerifyGetKey;
  fetchedAt: number;
  attemptedAt: number;
  pending?: Promise<void>;
}

/**
 * Key sets of allowlisted gatekeepers, one per origin, living as long as the
 * isolate. Only ever asked for an origin that already passed the allowlist
 * (and a `jku` that is exactly that origin's JWKS URL): it fetches
 * `<origin>/.well-known/jwks.json` and nothing else.
 */
export class GatekeeperJwks {
  readonly maxEntries: number;
  readonly #options: GatekeeperJwksOptions;
  /** This cache as test clocks shorten it, one per age (`withMaxAge`). */
  readonly #shortened = new Map<number, GatekeeperJwks>();
  readonly #entries = new Map<string, Entry>();
  readonly #cooldownMs: number;
  readonly #maxAgeMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;

  constructor(options: GatekeeperJwksOptions = {}) {
    this.#options = options;
    this.#cooldownMs = options.cooldownMs ?? 5_000;
    this.#maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.maxEntries = options.maxEntries ?? 32;
    this.#now = options.now ?? Date.now;
  }

  /** How many gatekeepers' key sets are held (at most `maxEntries`). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * This cache with key sets at most `maxAgeMs` old, for a test clock
   * (docs/gatekeeper.md "Test clocks"): its own entries, kept for the
   * isolate, and a cooldown no longer than that age, so a set that aged out
   * is fetched again at once. Itself when `maxAgeMs` is unset or no shorter.
   */
  withMaxAge(maxAgeMs: number | undefined): GatekeeperJwks {
    if (maxAgeMs === undefined || maxAgeMs >= this.#maxAgeMs) return this;
    let shortened = this.#shortened.get(maxAgeMs);
    if (!shortened) {
      shortened = new GatekeeperJwks({ ...this.#options, maxAgeMs, cooldownMs: Math.min(this.#cooldownMs, maxAgeMs) });
      this.#shortened.set(maxAgeMs, shortened);
    }
    return shortened;
  }

  /** A key resolver for `jwtVerify` over the gatekeeper at `origin`. */
  forOrigin(origin: string): JWTVerifyGetKey {
    let entry = this.#entries.get(origin);
    if (entry) {
      // Map order is insertion order: re-inserting marks it most recently used.
      this.#entries.delete(origin);
    } else {
      entry = { url: `${origin}${JWKS_PATH}`, fetchedAt: -Infinity, attemptedAt: -Infinity };
    }
    this.#entries.set(origin, entry);
    while (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    const resolved = entry;
    return (header, token) => this.#resolve(resolved, header, token);
  }

  async #resolve(entry: Entry, header: Parameters<JWTVerifyGetKey>[0], token: Parameters<JWTVerifyGetKey>[1]) {
    const now = this.#now();
    if (entry.select === undefined || now - entry.fetchedAt >= this.#maxAgeMs) await this.#refresh(entry, now);
    try {
      return await entry.select!(header, token);
    } catch (error) {
      // A rotated key shows up under a new kid: look again, at most once per cooldown.
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      if (entry.pending === undefined && now - entry.attemptedAt < this.#cooldownMs) throw error;
      await this.#refresh(entry, now);
      return entry.select!(header, token);
    }
  }

  /** One fetch at a time per gatekeeper; concurrent callers share it. */
  #refresh(entry: Entry, now: number): Promise<void> {
    if (entry.pending) return entry.pending;
    if (now - entry.attemptedAt < this.#cooldownMs) {
      return Promise.reject(new GatekeeperJwksUnavailable("its last fetch failed moments ago"));
    }
    entry.attemptedAt = now;
    entry.pending = this.#fetch(entry.url)
      .then((select) => {
        entry.select = select;
        entry.fetchedAt = now;
      })
      .finally(() => {
        entry.pending = undefined;
      });
    return entry.pending;
  }

  async #fetch(url: string): Promise<JWTVerifyGetKey> {
    try {
      // A redirect is a failure: the key set must come from the exact URL the allowlist vouches for.
      const response = await fetch(url, {
        redirect: "manual",
        headers: { Accept: "application/jwk-set+json, application/json" },
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        const redirect = response.status >= 300 && response.status < 400 ? "; redirects are not followed" : "";
        throw new GatekeeperJwksUnavailable(`HTTP ${response.status}${redirect}`);
      }
      let body: unknown;
      try {
        body = await response.json();
      } catch {
        throw new GatekeeperJwksUnavailable("its body is not JSON");
      }
      // createLocalJWKSet refuses anything that is not `{keys: [objects]}`.
      return createLocalJWKSet(body as JSONWebKeySet);
    } catch (error) {
      const reason =
        error instanceof GatekeeperJwksUnavailable
          ? error.message
          : error instanceof errors.JWKSInvalid
            ? "its body is not a JWKS"
            : (error as Error)?.name === "TimeoutError"
              ? "the fetch timed out"
              : "the fetch failed";
      // Bounded by the cooldown: at most one line per gatekeeper per cooldown.
      console.warn(`gatekeeper JWKS ${url}: ${reason}`);
      throw new GatekeeperJwksUnavailable(reason);
    }
  }
}
