import { AgentCard, canonicalizeAgentCard, verifyAgentCardSignature } from "@a2a-js/sdk";
import { canonicalCardPayload } from "@dynamicagents/core/a2a";
import { decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { describe, expect, it, vi } from "vitest";
import { ORIGIN } from "./support/constants.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, referenceWorker, type Fetcher } from "./support/rpc.js";

const get = (path: string, headers: Record<string, string> = {}, worker: Fetcher = referenceWorker) => worker(new Request(`${ORIGIN}${path}`, { headers }));

/** A verifier exactly as a gatekeeper would build it: resolve `jku`, pick `kid`. */
const sdkVerifier = verifyAgentCardSignature(async (kid, jku) => {
  expect(jku).toBe(`${ORIGIN}/.well-known/jwks.json`);
  const jwks = (await (await get(new URL(jku!).pathname)).json()) as { keys: JWK[] };
  const jwk = jwks.keys.find((k) => k.kid === kid);
  if (!jwk) throw new Error(`no key ${kid}`);
  return (await importJWK(jwk, "EdDSA")) as CryptoKey;
});

describe("the JWKS", () => {
  it("serves the public half of A2A_SIGNING_KEY and never d", async () => {
    const res = await get("/.well-known/jwks.json");
    expect(res.status).toBe(200);
    const { keys } = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toEqual({ kty: "OKP", crv: "Ed25519", x: expect.any(String), kid: "a2a-test", alg: "EdDSA", use: "sig" });
    expect(keys[0]).not.toHaveProperty("d");
  });

  it("answers with Cache-Control and an ETag, and 304 on If-None-Match", async () => {
    const first = await get("/.well-known/jwks.json");
    expect(first.headers.get("Cache-Control")).toMatch(/max-age=\d+/);
    const etag = first.headers.get("ETag")!;
    expect(etag).toMatch(/^".+"$/);
    const again = await get("/.well-known/jwks.json", { "If-None-Match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const weak = await get("/.well-known/jwks.json", { "If-None-Match": `"nope", W/${etag}` });
    expect(weak.status).toBe(304);
    const stale = await get("/.well-known/jwks.json", { "If-None-Match": '"stale"' });
    expect(stale.status).toBe(200);
  });
});

describe("the JWKS during a rotation (A2A_PREVIOUS_PUBLIC_KEYS)", () => {
  const previousKey = async (kid: string) => {
    const { publicKey, privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    return { public: { ...(await exportJWK(publicKey)), kid }, private: { ...(await exportJWK(privateKey)), kid } };
  };
  const jwksOf = (vars: Record<string, string>, headers: Record<string, string> = {}) => get("/.well-known/jwks.json", headers, isolatedEdge({}, vars).fetch);

  it("publishes each previous key after the current one, as {kty, crv, x, kid, alg, use}", async () => {
    const [a, b] = [await previousKey("a2a-2026-01-01-0badc0de"), await previousKey("a2a-2026-06-01-feedf00d")];
    const previous = JSON.stringify([
      { ...a.public, key_ops: ["verify"] },
      { ...b.public, alg: "EdDSA", use: "sig" },
    ]);
    const res = await jwksOf({ A2A_PREVIOUS_PUBLIC_KEYS: previous });
    expect(res.status).toBe(200);
    const { keys } = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(keys.map((k) => k.kid)).toEqual(["a2a-test", a.public.kid, b.public.kid]);
    expect(keys[1]).toEqual({ kty: "OKP", crv: "Ed25519", x: a.public.x, kid: a.public.kid, alg: "EdDSA", use: "sig" });
    expect(keys[2]).toEqual({ kty: "OKP", crv: "Ed25519", x: b.public.x, kid: b.public.kid, alg: "EdDSA", use: "sig" });

    // The ETag covers the whole body: it differs from the current key alone, and still answers 304.
    const etag = res.headers.get("ETag")!;
    expect(etag).not.toBe((await jwksOf({})).headers.get("ETag"));
    expect((await jwksOf({ A2A_PREVIOUS_PUBLIC_KEYS: previous }, { "If-None-Match": etag })).status).toBe(304);
  });

  it("refuses a private previous key loudly, without echoing it", async () => {
    const old = await previousKey("a2a-2026-01-01-0badc0de");
    const res = await jwksOf({ A2A_PREVIOUS_PUBLIC_KEYS: JSON.stringify([old.private]) });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({
      error: "server_misconfigured",
      error_description: expect.stringMatching(/A2A_PREVIOUS_PUBLIC_KEYS\[0\] is a private key/),
    });
    expect(text).not.toContain(old.private.d!);
  });

  it("refuses malformed previous keys as a configuration error", async () => {
    const old = (await previousKey("a2a-2026-01-01-0badc0de")).public;
    const cases: Array<[string, unknown, RegExp]> = [
      ["not JSON", "[{", /not JSON/],
      ["not an array", JSON.stringify(old), /JSON array/],
      ["another kty", JSON.stringify([{ ...old, kty: "EC" }]), /kty must be "OKP"/],
      ["another curve", JSON.stringify([{ ...old, crv: "X25519" }]), /crv must be "Ed25519"/],
      ["no kid", JSON.stringify([{ ...old, kid: undefined }]), /kid is required/],
      ["the current key's kid", JSON.stringify([{ ...old, kid: "a2a-test" }]), /kid of the current A2A_SIGNING_KEY/],
      ["a repeated kid", JSON.stringify([old, old]), /repeats the kid/],
      ["another alg", JSON.stringify([{ ...old, alg: "ES256" }]), /alg, when given, must be "EdDSA"/],
      ["an x that is no Ed25519 key", JSON.stringify([{ ...old, x: "AAAA" }]), /not a usable Ed25519 public key/],
    ];
    for (const [label, value, message] of cases) {
      const res = await jwksOf({ A2A_PREVIOUS_PUBLIC_KEYS: value as string });
      expect(res.status, label).toBe(500);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error, label).toBe("server_misconfigured");
      expect(body.error_description, label).toMatch(message);
    }
  });
});

describe("the stub card", () => {
  it("is signed so that @a2a-js/sdk's verifier accepts it, as wire JSON and decoded", async () => {
    const wire = await (await get("/.well-known/agent-card.json")).json();
    await expect(sdkVerifier(wire as AgentCard)).resolves.toBeUndefined();
    await expect(sdkVerifier(AgentCard.fromJSON(wire))).resolves.toBeUndefined();
  });

  it("names no tenant, advertises the endpoint, extended card and push, and lists the tenants for humans", async () => {
    const card = (await (await get("/.well-known/agent-card.json")).json()) as Record<string, any>;
    expect(card.supportedInterfaces).toEqual([{ url: `${ORIGIN}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }]);
    expect(card.capabilities).toMatchObject({ extendedAgentCard: true, pushNotifications: true });
    expect(card.description).toContain("assistant");
    expect(card.description).toContain("researcher");
  });

  it("is the deployment's manifest exactly: core adds no words of its own", async () => {
    const marker = crypto.randomUUID();
    const deployment = {
      name: `name ${marker}`,
      description: `description ${marker}`,
      version: "9.9.9",
      skills: [{ id: `skill-${marker}`, name: `skill ${marker}`, description: `skill description ${marker}`, tags: [`tag-${marker}`] }],
    };
    const card = (await (await get("/.well-known/agent-card.json", {}, isolatedEdge({ deployment }).fetch)).json()) as Record<string, any>;
    expect(card.name).toBe(deployment.name);
    expect(card.description).toBe(deployment.description);
    expect(card.skills).toEqual(deployment.skills);
    await expect(sdkVerifier(card as AgentCard)).resolves.toBeUndefined();
  });

  it("carries the protected header alg, typ, kid and jku", async () => {
    const card = (await (await get("/.well-known/agent-card.json")).json()) as Record<string, any>;
    expect(decodeProtectedHeader(card.signatures[0])).toEqual({
      alg: "EdDSA",
      typ: "JOSE",
      kid: "a2a-test",
      jku: `${ORIGIN}/.well-known/jwks.json`,
    });
  });

  it("fails verification once tampered with", async () => {
    const wire = (await (await get("/.well-known/agent-card.json")).json()) as Record<string, any>;
    const tampered = AgentCard.fromJSON({ ...wire, description: `${wire.description} (edited)` });
    await expect(sdkVerifier(tampered)).rejects.toThrow();
  });

  it("is served with Cache-Control, an ETag and 304 on If-None-Match", async () => {
    const first = await get("/.well-known/agent-card.json");
    expect(first.headers.get("Cache-Control")).toMatch(/max-age=\d+/);
    const again = await get("/.well-known/agent-card.json", { "If-None-Match": first.headers.get("ETag")! });
    expect(again.status).toBe(304);
  });

  it("is signed once per isolate, not per request", async () => {
    const edge = isolatedEdge();
    const sign = vi.spyOn(crypto.subtle, "sign");
    try {
      for (let i = 0; i < 5; i++) expect((await get("/.well-known/agent-card.json", {}, edge.fetch)).status).toBe(200);
      expect(sign).toHaveBeenCalledTimes(1);
    } finally {
      sign.mockRestore();
    }
  });
});

describe("GetExtendedAgentCard", () => {
  for (const tenant of ["assistant", "researcher"]) {
    it(`returns ${tenant}'s own signed card`, async () => {
      using _ = interceptOutbound();
      const reply = await call("GetExtendedAgentCard", {}, { mint: { tenant } });
      expect(reply.status).toBe(200);
      const wire = reply.body.result;
      expect(wire.supportedInterfaces[0]).toEqual({
        url: `${ORIGIN}/a2a`,
        protocolBinding: "JSONRPC",
        tenant,
        protocolVersion: "1.0",
      });
      expect(wire.skills.length).toBeGreaterThan(0);
      await expect(sdkVerifier(wire)).resolves.toBeUndefined();
      await expect(sdkVerifier(AgentCard.fromJSON(wire))).resolves.toBeUndefined();
    });
  }
});

describe("the §8.4.1 canonical form (test vectors)", () => {
  it("keeps REQUIRED fields that are empty, which @a2a-js/sdk drops (a2a-js #627)", () => {
    const card = { name: "Example Agent", description: "", capabilities: { streaming: false, pushNotifications: false }, skills: [] };
    expect(canonicalCardPayload(card)).toBe(
      '{"capabilities":{"pushNotifications":false,"streaming":false},"defaultInputModes":[],"defaultOutputModes":[],' +
        '"description":"","name":"Example Agent","skills":[],"supportedInterfaces":[],"version":""}',
    );
    // Pinned so an SDK upgrade that changes this is noticed: the SDK's form omits them.
    expect(canonicalizeAgentCard(AgentCard.fromJSON(card))).toBe('{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}');
  });

  it("restores required fields inside nested messages, omits empty optional ones, and drops signatures and unknown members", () => {
    const card = {
      name: "n",
      description: "d",
      version: "1",
      supportedInterfaces: [{ url: "https://a.test/a2a", protocolBinding: "JSONRPC" }],
      capabilities: {},
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [{ id: "s", name: "S", description: "", examples: [] }],
      provider: { organization: "Org" },
      signatures: [{ protected: "x", signature: "y" }],
      notInTheSchema: true,
    };
    expect(canonicalCardPayload(card)).toBe(
      '{"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"d",' +
        '"name":"n","provider":{"organization":"Org","url":""},' +
        '"skills":[{"description":"","id":"s","name":"S","tags":[]}],' +
        '"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"","url":"https://a.test/a2a"}],"version":"1"}',
    );
  });

  it("serializes per RFC 8785: UTF-16 key order, literal non-ASCII, escaped controls", () => {
    const card = {
      name: "Café ☕ \u0007",
      description: "\u{1F600}",
      version: "1",
      supportedInterfaces: [{ url: "https://a.test/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      capabilities: { streaming: true },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [{ id: "s", name: "S", description: "D", tags: ["t"] }],
    };
    expect(canonicalCardPayload(card)).toBe(
      '{"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],' +
        '"description":"\u{1F600}","name":"Café ☕ \\u0007","skills":[{"description":"D","id":"s","name":"S","tags":["t"]}],' +
        '"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://a.test/a2a"}],"version":"1"}',
    );
  });

  it("agrees byte for byte with the SDK's form on every card this deployment serves", async () => {
    using _ = interceptOutbound();
    const served = [await (await get("/.well-known/agent-card.json")).json()];
    for (const tenant of ["assistant", "researcher"]) {
      served.push((await call("GetExtendedAgentCard", {}, { mint: { tenant } })).body.result);
    }
    for (const card of served) expect(canonicalCardPayload(card)).toBe(canonicalizeAgentCard(AgentCard.fromJSON(card)));
  });
});
