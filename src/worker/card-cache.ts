import { ConfigError } from "../errors/index.js";
import { buildCardWire, validateManifest, type AgentManifest } from "../a2a/agent-manifest.js";
import { signCard } from "../a2a/card-signing.js";
import type { SigningKey } from "../a2a/signing-key.js";
import { endpointOf } from "../a2a/wire.js";
import { cachedBody, type CachedBody } from "./http-cache.js";

export interface SignedCard extends CachedBody {
  card: Record<string, unknown>;
}

/**
 * Signed cards, one per (origin, tenant, key) for the life of the isolate.
 * Signing is an Ed25519 operation plus a canonicalization; a card is asked
 * for on every registration and every GetExtendedAgentCard, and it only
 * changes when the deployment does.
 */
export class CardCache {
  readonly #cards = new Map<string, Promise<SignedCard>>();

  constructor(
    private readonly stub: AgentManifest,
    private readonly tenants: ReadonlyMap<string, AgentManifest>,
  ) {
    validateManifest(stub);
    for (const [tenant, manifest] of tenants) validateManifest(manifest, tenant);
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
    if (!card) {
      const manifest = tenant === undefined ? this.stub : this.tenants.get(tenant);
      // Only ever asked for a tenant the edge's known-tenant step let through.
      if (!manifest) throw new ConfigError({ kind: "manifest", name: `tenants.${tenant}` }, `no manifest for tenant ${tenant}`, { code: ConfigError.MISSING });
      card = (async () => {
        const wire = buildCardWire(manifest, { endpoint: endpointOf(origin), tenant });
        const signed = await signCard(wire, key, origin);
        return { card: signed, ...(await cachedBody(signed)) };
      })();
      card.catch(() => this.#cards.delete(cacheKey));
      this.#cards.set(cacheKey, card);
    }
    return card;
  }
}
