#!/usr/bin/env node
// Prints a fresh private Ed25519 JWK for A2A_SIGNING_KEY. The kid carries the
// date so a rotated key is told apart from its predecessor at a glance.
import { exportJWK, generateKeyPair } from "jose";

const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
const jwk = await exportJWK(privateKey);
const kid = `a2a-${new Date().toISOString().slice(0, 10)}`;
process.stdout.write(`${JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d, kid })}\n`);
