import { FlattenedSign } from "jose";
import { canonicalCardPayload } from "./card-canonical.js";
import type { SigningKey } from "./signing-key.js";
import { JWKS_PATH } from "./wire.js";

export interface CardSignature {
  protected: string;
  signature: string;
}

/**
 * Signs a card's wire JSON as A2A §8.4.2 describes: a JWS with detached
 * payload over the §8.4.1 canonical form. `jku` lets a verifier find the key
 * from the card alone; `kid` picks it out of that JWKS.
 */
export async function signCard<T extends Record<string, unknown>>(cardWire: T, key: SigningKey, origin: string): Promise<T & { signatures: CardSignature[] }> {
  const payload = new TextEncoder().encode(canonicalCardPayload(cardWire));
  const jws = await new FlattenedSign(payload)
    .setProtectedHeader({ alg: "EdDSA", typ: "JOSE", kid: key.kid, jku: `${origin}${JWKS_PATH}` })
    .sign(key.privateKey);
  return { ...cardWire, signatures: [{ protected: jws.protected!, signature: jws.signature }] };
}
