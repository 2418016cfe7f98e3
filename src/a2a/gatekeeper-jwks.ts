import { createRemoteJWKSet, type JWTVerifyGetKey } from "jose";

export interface GatekeeperJwksOptions {
  /**
   * Minimum time between two fetches of one JWKS. An unknown `kid` triggers a
   * refetch only once this has passed, so a rotated gatekeeper key is accepted
   * within this many milliseconds while a stream of forged `kid`s cannot turn
   * this Worker into a request amplifier against the gatekeeper.
   */
  cooldownMs?: number;
  /** How long a fetched JWKS is trusted before it is refetched anyway. */
  maxAgeMs?: number;
  /** Per-fetch timeout. */
  timeoutMs?: number;
}

/**
 * Key resolvers for allowlisted gatekeepers, one per `jku`, living as long as
 * the isolate. Only ever called with a `jku` whose origin already passed the
 * allowlist: this object performs the fetch and must never see any other URL.
 */
export class GatekeeperJwks {
  readonly #sets = new Map<string, JWTVerifyGetKey>();
  readonly #options: Required<GatekeeperJwksOptions>;

  constructor(options: GatekeeperJwksOptions = {}) {
    this.#options = {
      cooldownMs: options.cooldownMs ?? 5_000,
      maxAgeMs: options.maxAgeMs ?? 10 * 60_000,
      timeoutMs: options.timeoutMs ?? 5_000,
    };
  }

  forJku(jku: string): JWTVerifyGetKey {
    let set = this.#sets.get(jku);
    if (!set) {
      set = createRemoteJWKSet(new URL(jku), {
        cooldownDuration: this.#options.cooldownMs,
        cacheMaxAge: this.#options.maxAgeMs,
        timeoutDuration: this.#options.timeoutMs,
      });
      this.#sets.set(jku, set);
    }
    return set;
  }
}
