import { importJWK, type JWK } from "jose";

/**
 * Ed25519 keys for tests, and for nothing else: they are public, in this
 * package's source. Fixed rather than generated so every spec file in a run
 * agrees with the edge's per-isolate JWKS cache about which gatekeeper key
 * is current.
 */
export const GATEKEEPER_FIXTURE_JWK = {
  kty: "OKP",
  crv: "Ed25519",
  x: "8mAhAZx6Ctlr5cTPTRpnggVMiGyAGgU958-Y0y49ycw",
  d: "qMNl2MtBs79yNIdgxVELtH5OSJn6OS8e36fAgzwBtVo",
  kid: "gatekeeper-fixture-1",
} as const;

/** A second gatekeeper key, for rotation specs. */
export const ROTATED_GATEKEEPER_FIXTURE_JWK = {
  kty: "OKP",
  crv: "Ed25519",
  x: "zEWdfMYD2QT6ZbJ9MzFr-ERVisHr9xMl1X7DalO0h40",
  d: "IjUxpCHjgluWAUeXrH1BQL9MQbps1ffAZkypEDiiYzU",
  kid: "gatekeeper-fixture-2",
} as const;

/** An agent card key, usable as `A2A_SIGNING_KEY` in a test configuration. */
export const AGENT_FIXTURE_JWK = {
  kty: "OKP",
  crv: "Ed25519",
  x: "WjKl6I0zUrOnJh9pt4Y1EBCSzuZy6jqHZggSicUCMjM",
  d: "2795dw3pXTMFE5eOXAq_iG6FyI02qWdCX_qm5mWi9yY",
  kid: "agent-fixture-1",
} as const;

export interface FixtureKey {
  kid: string;
  privateKey: CryptoKey;
  /** Without `d`, with `alg` and `use`: what a JWKS publishes. */
  publicJwk: JWK;
}

/** The public half of a private JWK, as a JWKS publishes it. */
export function publicHalf(jwk: JWK): JWK {
  const { d: _private, ...publicJwk } = jwk;
  return { ...publicJwk, alg: "EdDSA", use: "sig" };
}

/** Imports a fixture (or any private Ed25519 JWK) for signing. */
export async function fixtureKey(jwk: JWK): Promise<FixtureKey> {
  const privateKey = (await importJWK({ ...jwk, alg: "EdDSA" }, "EdDSA")) as CryptoKey;
  return { kid: String(jwk.kid), privateKey, publicJwk: publicHalf(jwk) };
}
