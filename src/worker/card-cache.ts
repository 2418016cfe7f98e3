import { ConfigError } from "../errors/index.js";
import { buildCardWire, validateManifest, type AgentManifest } from "../a2a/agent-manifest.js";
import { signCard } from "../a2a/card-signing.js";
import type { SigningKey } from "../a2a/signing-key.js";
import { endpointOf, restEndpointOf } from "../a2a/wire.js";
import { cachedBody, type CachedBody } from "./http-cache.js";

export interface SignedCard extends CachedBody {
  card: Record<string, unknown>;
}

/** Room for every tenant's card and the stub under a key and the one before it, and a few origins besides. */
const DEFAULT_MAX_ENTRIES = 64;

/**
 * Signed cards, one per (origin, tenant, key), the most recently used kept
 * for the life of the isolate. Signing is an Ed25519 operation plus a
 * canonicalization; a card is asked for on every registration and every
 * GetExtendedAgentCard, and it only changes when the deployment does. Bounded:
 * without `PUBLIC_ORIGIN` the origin is the request's, so any Host header
 * would otherwise add an entry.
 */
export class CardCache {
  readonly #cards = new Map<string, Promise<SignedCard>>();
  readonly #maxEntries: number;

  constructor(
    private readonly stub: AgentManifest,
    private readonly tenants: ReadonlyMap<string, AgentManifest>,
    options: { maxEntries?: number } = {},
  ) {
    validateManifest(stub);
    for (const [tenant, manifest] of tenants) validateManifest(manifest, tenant);
    this.#maxEntries = Math.max(options.maxEntries ?? DEFAULT_MAX_ENTRIES, 2 * (tenants.size + 1));
  }

  /** How many signed cards are held (at most the cache's bound). */
  get size(): number {
    return this.#cards.size;
  }

  stubCard(origin: string, key: SigningKey): Promise<SignedCard> {
    return this.#get(origin, undefined, key);
  }

  tenantCard(origin: string, tenant: string, key: SigningKey): Promise<SignedCard> {
    return this.#get(origin, tenant, key);
  }

  #get(origin: string, tenant: string | undefined, key: SigningKey): Promise<SignedCard> {
    const cacheKey = JSON.stringify([origin, tenant ?? null, key.kid, key.publicJwk.x]);
    let card = this.#cards.get(cacheKey);
    // Map order is insertion order: re-inserting marks it most recently used.
    if (card) this.#cards.delete(cacheKey);
    else {
      const manifest = tenant === undefined ? this.stub : this.tenants.get(tenant);
      // Only ever asked for a tenant the edge's known-tenant step let through.
      if (!manifest) throw new ConfigError({ kind: "manifest", name: `tenants.${tenant}` }, `no manifest for tenant ${tenant}`, { code: ConfigError.MISSING });
      const made = (async () => {
        const wire = buildCardWire(manifest, { endpoint: endpointOf(origin), restEndpoint: restEndpointOf(origin), tenant });
        const signed = await signCard(wire, key, origin);
        return { card: signed, ...(await cachedBody(signed)) };
      })();
      // A failed signing is not kept; an entry made since (this one evicted meanwhile) is.
      made.catch(() => {
        if (this.#cards.get(cacheKey) === made) this.#cards.delete(cacheKey);
      });
      card = made;
    }
    this.#cards.set(cacheKey, card);
    while (this.#cards.size > this.#maxEntries) this.#cards.delete(this.#cards.keys().next().value!);
    return card;
  }
}
