#!/usr/bin/env node
// Prints a fresh private Ed25519 JWK for A2A_SIGNING_KEY. The kid carries the
// date, so a rotated key is told apart from its predecessor at a glance, and
// part of the key's thumbprint, so two keys made the same day never share one.
// `npm start` imports `freshSigningJwk` to create the local dev key.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { base64url, calculateJwkThumbprint, exportJWK, generateKeyPair } from "jose";

/**
 * A fresh private signing JWK: `{kty, crv, x, d, kid}` with `kid` =
 * `a2a-YYYY-MM-DD-<first 8 hex of the RFC 7638 SHA-256 thumbprint>`.
 * @returns {Promise<{ kty: string, crv: string, x: string, d: string, kid: string }>}
 */
export async function freshSigningJwk(now = new Date()) {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const jwk = await exportJWK(privateKey);
  // RFC 7638 §3.2: only kty, crv and x count, so the thumbprint is the public key's.
  const thumbprint = base64url.decode(await calculateJwkThumbprint(jwk, "sha256"));
  const hex = Buffer.from(thumbprint.subarray(0, 4)).toString("hex");
  const { kty, crv, x, d } = /** @type {{ kty: string, crv: string, x: string, d: string }} */ (jwk);
  return { kty, crv, x, d, kid: `a2a-${now.toISOString().slice(0, 10)}-${hex}` };
}

const invokedDirectly = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) process.stdout.write(`${JSON.stringify(await freshSigningJwk())}\n`);
