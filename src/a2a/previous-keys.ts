import { importJWK } from "jose";
import { z } from "zod";
import { ConfigError } from "../errors/index.js";
import type { PublicSigningJwk } from "./signing-key.js";

const publicEd25519Jwk = z.object({
  kty: z.literal("OKP", { message: 'kty must be "OKP"' }),
  crv: z.literal("Ed25519", { message: 'crv must be "Ed25519"' }),
  x: z.string({ message: "x is required" }).min(1, "x is required"),
  kid: z.string({ message: "kid is required: verifiers pick the key by it" }).min(1, "kid is required: verifiers pick the key by it"),
  alg: z.literal("EdDSA", { message: 'alg, when given, must be "EdDSA"' }).optional(),
  use: z.literal("sig", { message: 'use, when given, must be "sig"' }).optional(),
});

const cache = new Map<string, Promise<PublicSigningJwk[]>>();

// A setting, not a secret: it holds public keys only (a private one is refused below).
const refuse = (message: string) => new ConfigError({ kind: "setting", name: "A2A_PREVIOUS_PUBLIC_KEYS" }, message);

/**
 * Parses `A2A_PREVIOUS_PUBLIC_KEYS` (a JSON array of public Ed25519 JWKs still
 * published after a rotation, so a verifier holding a card or callback signed
 * by the old key can still check it) once per isolate, against the current key's kid.
 */
export function loadPreviousPublicKeys(raw: string | undefined, currentKid: string): Promise<PublicSigningJwk[]> {
  if (raw === undefined || raw.trim() === "") return Promise.resolve([]);
  const cacheKey = JSON.stringify([raw, currentKid]);
  let keys = cache.get(cacheKey);
  if (!keys) {
    keys = parsePreviousKeys(raw, currentKid);
    // A rejected parse stays cached too: the setting cannot fix itself.
    cache.set(cacheKey, keys);
  }
  return keys;
}

async function parsePreviousKeys(raw: string, currentKid: string): Promise<PublicSigningJwk[]> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw refuse("A2A_PREVIOUS_PUBLIC_KEYS is not JSON: it must be a JSON array of public Ed25519 JWKs");
  }
  if (!Array.isArray(value)) throw refuse("A2A_PREVIOUS_PUBLIC_KEYS must be a JSON array of public Ed25519 JWKs");
  const kids = new Set([currentKid]);
  const keys: PublicSigningJwk[] = [];
  for (const [index, entry] of value.entries()) {
    const where = `A2A_PREVIOUS_PUBLIC_KEYS[${index}]`;
    // Refused loudly rather than stripped: a private key does not belong in this setting at all.
    if (entry !== null && typeof entry === "object" && "d" in entry) {
      throw refuse(`${where} is a private key (it has \`d\`): list only public keys here, and treat that private key as exposed`);
    }
    const parsed = publicEd25519Jwk.safeParse(entry);
    if (!parsed.success) throw refuse(`${where} is not a public Ed25519 JWK: ${parsed.error.issues[0]!.message}`);
    const { x, kid } = parsed.data;
    if (kid === currentKid) {
      throw refuse(`${where} has the kid of the current A2A_SIGNING_KEY (${JSON.stringify(kid)}): kids must tell the keys apart`);
    }
    if (kids.has(kid)) throw refuse(`${where} repeats the kid ${JSON.stringify(kid)}: kids must tell the keys apart`);
    kids.add(kid);
    try {
      await importJWK({ kty: "OKP", crv: "Ed25519", x }, "EdDSA");
    } catch (error) {
      throw refuse(`${where} is not a usable Ed25519 public key: ${(error as Error).message}`);
    }
    keys.push({ kty: "OKP", crv: "Ed25519", x, kid, alg: "EdDSA", use: "sig" });
  }
  return keys;
}
