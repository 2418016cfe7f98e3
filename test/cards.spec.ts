import { AgentCard, canonicalizeAgentCard, verifyAgentCardSignature } from "@a2a-js/sdk";
import { env } from "cloudflare:workers";
import { ERASURE_EXTENSION, canonicalCardPayload, loadSigningKey } from "@dynamicagents/core/a2a";
import { base64url, decodeProtectedHeader, exportJWK, flattenedVerify, generateKeyPair, importJWK, type JWK } from "jose";
import { describe, expect, it, vi } from "vitest";
import { deployment } from "../reference/manifests.js";
import { tenants } from "../reference/tenants.js";
import { CardCache } from "../src/worker/card-cache.js";
import { IDENTITY_CLAIM, ORIGIN, TENANT_CLAIM } from "./support/constants.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, referenceWorker, type Fetcher } from "./support/rpc.js";

const get = (path: string, headers: Record<string, string> = {}, worker: Fetcher = referenceWorker) => worker(new Request(`${ORIGIN}${path}`, { headers }));

/** The SDK's verifier logs each signature it rejects: quiet where rejection is the point. */
async function quietly(work: () => Promise<void>): Promise<void> {
  const debug = vi.spyOn(console, "debug").mockImplementation(() => {});
  try {
    await work();
  } finally {
    debug.mockRestore();
  }
}

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

/**
 * The progress extension as every card declares it (docs/protocol.md "Progress"): not required (proto-JSON
 * leaves `required: false` out, as it does every default), with the draft's params.
 */
const PROGRESS_DECLARED = {
  uri: "https://a2a-protocol.org/extensions/task-progress/v1",
  description: expect.stringContaining("progress"),
  params: { maxTrackers: 20, maxMessageChars: 512, maxIdChars: 128, recommendedMaxUpdatesPerSecond: 2 },
};

describe("the stub card", () => {
  it("is signed so that @a2a-js/sdk's verifier, given the wire JSON, accepts it", async () => {
    const wire = await (await get("/.well-known/agent-card.json")).json();
    await expect(sdkVerifier(wire as AgentCard)).resolves.toBeUndefined();
  });

  it("names no tenant, advertises both interfaces (JSON-RPC first), streaming, extended card, push and progress, and lists the tenants for humans", async () => {
    const card = (await (await get("/.well-known/agent-card.json")).json()) as Record<string, any>;
    expect(card.supportedInterfaces).toEqual([
      { url: `${ORIGIN}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${ORIGIN}/a2a/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
    expect(card.capabilities).toEqual({
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: true,
      extensions: [PROGRESS_DECLARED, { uri: ERASURE_EXTENSION }],
    });
    expect(card.description).toContain("assistant");
    expect(card.description).toContain("researcher");
  });

  it("declares the gatekeeper's bearer JWT as an HTTP security scheme, and requires it", async () => {
    const card = (await (await get("/.well-known/agent-card.json")).json()) as Record<string, any>;
    expect(card.securitySchemes).toEqual({ gatekeeperJwt: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } } });
    expect(card.securityRequirements).toEqual([{ schemes: { gatekeeperJwt: { list: [TENANT_CLAIM, IDENTITY_CLAIM] } } }]);
    // As the SDK reads it: the oneof's case, and a requirement naming a declared scheme.
    const decoded = AgentCard.fromJSON(card);
    expect(decoded.securitySchemes.gatekeeperJwt?.scheme).toEqual({
      $case: "httpAuthSecurityScheme",
      value: { description: "", scheme: "Bearer", bearerFormat: "JWT" },
    });
    for (const requirement of decoded.securityRequirements) {
      for (const name of Object.keys(requirement.schemes)) expect(decoded.securitySchemes).toHaveProperty(name);
    }
  });

  it("must reach the SDK's verifier as wire JSON: a card it already decoded loses the scheme (a oneof) on the second decode", async () => {
    // Pinned so an SDK upgrade that changes this is noticed (docs/protocol.md "Card signatures").
    const wire = await (await get("/.well-known/agent-card.json")).json();
    expect(canonicalizeAgentCard(AgentCard.fromJSON(wire))).not.toContain("securitySchemes");
    await quietly(() => expect(sdkVerifier(AgentCard.fromJSON(wire))).rejects.toThrow(/No valid signatures/));
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

  it("fails verification once tampered with, the security scheme included", async () => {
    const wire = (await (await get("/.well-known/agent-card.json")).json()) as Record<string, any>;
    const tampered = [
      { ...wire, description: `${wire.description} (edited)` },
      { ...wire, securitySchemes: { gatekeeperJwt: { httpAuthSecurityScheme: { scheme: "Basic" } } } },
      { ...wire, securitySchemes: undefined, securityRequirements: undefined },
      { ...wire, capabilities: { ...wire.capabilities, streaming: false } },
    ];
    await quietly(async () => {
      for (const card of tampered) await expect(sdkVerifier(card as AgentCard)).rejects.toThrow(/No valid signatures/);
    });
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

describe("the card cache without PUBLIC_ORIGIN", () => {
  // The origin is then each request's own: every Host header would be an entry of its own.
  it("holds at most its bound, dropping the least recently used card first", async () => {
    const key = await loadSigningKey(env.A2A_SIGNING_KEY);
    const cards = new CardCache(deployment, new Map(), { maxEntries: 8 });
    const first = cards.stubCard("https://host-0.test", key);
    for (let i = 1; i < 100; i++) await cards.stubCard(`https://host-${i}.test`, key);
    expect(cards.size).toBe(8);
    // The newest is still held; the first was dropped and is signed anew.
    expect(cards.stubCard("https://host-99.test", key)).toBe(cards.stubCard("https://host-99.test", key));
    expect(cards.stubCard("https://host-0.test", key)).not.toBe(first);
    expect(cards.size).toBe(8);
  });

  it("keeps the edge's cache bounded under many Host values: the first host's card is signed again, the last one's is not", async () => {
    const edge = isolatedEdge();
    const card = (host: string) => edge.fetch(new Request(`https://${host}/.well-known/agent-card.json`));
    for (let i = 0; i < 300; i++) expect((await card(`host-${i}.test`)).status).toBe(200);
    const sign = vi.spyOn(crypto.subtle, "sign");
    try {
      await card("host-299.test");
      expect(sign).not.toHaveBeenCalled();
      await card("host-0.test");
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
      expect(wire.supportedInterfaces).toEqual([
        { url: `${ORIGIN}/a2a`, protocolBinding: "JSONRPC", tenant, protocolVersion: "1.0" },
        { url: `${ORIGIN}/a2a/rest`, protocolBinding: "HTTP+JSON", tenant, protocolVersion: "1.0" },
      ]);
      expect(wire.skills.length).toBeGreaterThan(0);
      expect(wire.capabilities).toEqual({
        streaming: true,
        pushNotifications: true,
        extendedAgentCard: true,
        extensions: [PROGRESS_DECLARED, { uri: ERASURE_EXTENSION }],
      });
      expect(wire.securitySchemes).toEqual({ gatekeeperJwt: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } } });
      expect(wire.securityRequirements).toEqual([{ schemes: { gatekeeperJwt: { list: [TENANT_CLAIM, IDENTITY_CLAIM] } } }]);
      await expect(sdkVerifier(wire)).resolves.toBeUndefined();
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
    for (const card of served) expect(canonicalCardPayload(card)).toBe(canonicalizeAgentCard(card as AgentCard));
  });
});

/** RFC 8785 for what a card holds (strings, booleans, arrays, objects): keys sorted by UTF-16 code units. */
const strictJcs = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(strictJcs).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${strictJcs(record[key])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
};

/** Every empty string, array or object in a value, by path. */
const emptiesIn = (value: unknown, path = "$"): string[] => {
  if (value === "") return [path];
  if (Array.isArray(value)) return value.length === 0 ? [path] : value.flatMap((item, i) => emptiesIn(item, `${path}[${i}]`));
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    return entries.length === 0 ? [path] : entries.flatMap(([key, item]) => emptiesIn(item, `${path}.${key}`));
  }
  return [];
};

/** The JWS checked by hand: plain JCS over the served JSON minus `signatures`, the key from the edge's JWKS. */
async function verifyStrictly(card: Record<string, any>, worker: Fetcher): Promise<void> {
  const { signatures, ...unsigned } = card;
  expect(signatures).toHaveLength(1);
  const header = decodeProtectedHeader(signatures[0]);
  expect(header.jku).toBe(`${ORIGIN}/.well-known/jwks.json`);
  const { keys } = (await (await get(new URL(header.jku!).pathname, {}, worker)).json()) as { keys: JWK[] };
  const jwk = keys.find((k) => k.kid === header.kid)!;
  const jws = { payload: base64url.encode(strictJcs(unsigned)), protected: signatures[0].protected, signature: signatures[0].signature };
  await expect(flattenedVerify(jws, await importJWK(jwk, "EdDSA"), { algorithms: ["EdDSA"] })).resolves.toBeDefined();
}

describe("every card this deployment serves (CONTRACT: card signatures)", () => {
  // A deployment manifest using every optional field, beside the reference one.
  const full = isolatedEdge({
    deployment: {
      name: "Full",
      description: "Every optional manifest field set",
      version: "2.0.0",
      provider: { organization: "Example Org", url: "https://example.test" },
      documentationUrl: "https://example.test/docs",
      iconUrl: "https://example.test/icon.png",
      defaultInputModes: ["text/plain", "application/json"],
      defaultOutputModes: ["text/markdown"],
      skills: [{ id: "s", name: "S", description: "D", tags: ["t"], examples: ["e"] }],
    },
  });

  async function servedCards(): Promise<Array<[string, Record<string, any>, Fetcher]>> {
    using _ = interceptOutbound();
    const cards: Array<[string, Record<string, any>, Fetcher]> = [];
    for (const [label, worker] of [
      ["reference", referenceWorker],
      ["full manifest", full.fetch],
    ] as const) {
      const res = await get("/.well-known/agent-card.json", {}, worker);
      cards.push([`stub card (${label})`, JSON.parse(await res.text()), worker]);
    }
    for (const tenant of Object.keys(tenants)) {
      const reply = await call("GetExtendedAgentCard", {}, { mint: { tenant } });
      cards.push([`${tenant}'s card`, reply.body.result, referenceWorker]);
    }
    return cards;
  }

  it("covers the stub card and every tenant of the reference deployment", async () => {
    expect((await servedCards()).map(([label]) => label)).toEqual([
      "stub card (reference)",
      "stub card (full manifest)",
      ...Object.keys(tenants).map((t) => `${t}'s card`),
    ]);
  });

  it("is a fixed point of the SDK's fromJSON → toJSON, signatures included", async () => {
    for (const [label, card] of await servedCards()) expect(AgentCard.toJSON(AgentCard.fromJSON(card)), label).toStrictEqual(card);
  });

  it("holds no empty string, array or object anywhere", async () => {
    for (const [label, card] of await servedCards()) expect(emptiesIn(card), label).toEqual([]);
  });

  it("verifies under plain RFC 8785 over the served JSON, and with the SDK's verifier given that JSON", async () => {
    for (const [label, card, worker] of await servedCards()) {
      await verifyStrictly(card, worker);
      await expect(sdkVerifier(card as AgentCard), label).resolves.toBeUndefined();
      // The three readings are one: ours (§8.4.1), plain JCS, the SDK's.
      const { signatures: _, ...unsigned } = card;
      expect(canonicalCardPayload(card), label).toBe(strictJcs(unsigned));
      expect(canonicalizeAgentCard(card as AgentCard), label).toBe(strictJcs(unsigned));
    }
  });
});

/** An A2A_SIGNING_KEY value with this kid. */
const signingKey = async (kid: string) => {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  return JSON.stringify({ ...(await exportJWK(privateKey)), kid });
};
const dated = await signingKey("a2a-2026-03-04-0badc0de");

describe("Last-Modified and If-Modified-Since on the card and the JWKS", () => {
  const ROUTES = ["/.well-known/agent-card.json", "/.well-known/jwks.json"];
  const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
  // Without a version metadata binding, whatever the test pool binds.
  const noVersion = { CF_VERSION_METADATA: undefined } as Record<string, unknown>;
  const datedEdge = () => isolatedEdge({}, { A2A_SIGNING_KEY: dated, ...noVersion });
  const lastModified = async (path: string, worker: Fetcher) => (await get(path, {}, worker)).headers.get("Last-Modified");

  it("is the same from two isolated edges started a day apart, and on every request, an HTTP-date", async () => {
    // The clock moves between the two start-ups: a date taken from it would differ.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const today = Date.now();
      for (const signing of [undefined, dated]) {
        const vars = signing === undefined ? {} : { A2A_SIGNING_KEY: signing };
        vi.setSystemTime(today + 86_400_000);
        const a = isolatedEdge({}, vars);
        const first = await Promise.all(ROUTES.map((path) => lastModified(path, a.fetch)));
        vi.setSystemTime(today + 2 * 86_400_000);
        const b = isolatedEdge({}, vars);
        for (const [i, path] of ROUTES.entries()) {
          expect(first[i], path).toMatch(HTTP_DATE);
          expect(await lastModified(path, b.fetch), path).toBe(first[i]);
          expect(await lastModified(path, a.fetch), path).toBe(first[i]);
        }
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("is the UTC day in the signing key's kid, as npm run keys writes it, in every isolate", async () => {
    for (const path of ROUTES) {
      expect(await lastModified(path, datedEdge().fetch), path).toBe("Wed, 04 Mar 2026 00:00:00 GMT");
      expect(await lastModified(path, datedEdge().fetch), path).toBe("Wed, 04 Mar 2026 00:00:00 GMT");
    }
  });

  it("is the deployment version's upload time when the Worker has a version metadata binding", async () => {
    const version = { CF_VERSION_METADATA: { id: "v-1", tag: "", timestamp: "2026-11-30T12:34:56.789Z" } } as Record<string, unknown>;
    for (const path of ROUTES) {
      const [a, b] = [isolatedEdge({}, { A2A_SIGNING_KEY: dated, ...version }), isolatedEdge({}, { A2A_SIGNING_KEY: dated, ...version })];
      expect(await lastModified(path, a.fetch), path).toBe("Mon, 30 Nov 2026 12:34:56 GMT");
      expect(await lastModified(path, b.fetch), path).toBe("Mon, 30 Nov 2026 12:34:56 GMT");
    }
  });

  it("moves when the key rotates: the old date no longer answers 304", async () => {
    const rotated = isolatedEdge({}, { A2A_SIGNING_KEY: await signingKey("a2a-2026-03-05-feedf00d"), ...noVersion });
    for (const path of ROUTES) {
      const before = (await lastModified(path, datedEdge().fetch))!;
      const after = await get(path, { "If-Modified-Since": before }, rotated.fetch);
      expect(after.status, path).toBe(200);
      expect(after.headers.get("Last-Modified"), path).toBe("Thu, 05 Mar 2026 00:00:00 GMT");
    }
  });

  it("answers If-Modified-Since at or after it with 304 (in any HTTP-date form), before it or unreadable with 200", async () => {
    const edge = datedEdge();
    for (const path of ROUTES) {
      const full = await get(path, {}, edge.fetch);
      for (const since of [
        "Wed, 04 Mar 2026 00:00:00 GMT",
        "Wed, 04 Mar 2026 00:00:01 GMT",
        "Tue, 01 Dec 2026 00:00:00 GMT",
        "Wednesday, 04-Mar-26 00:00:00 GMT",
        "Wed Mar  4 00:00:00 2026",
      ]) {
        const res = await get(path, { "If-Modified-Since": since }, edge.fetch);
        expect(res.status, `${path} ${since}`).toBe(304);
        expect(await res.text()).toBe("");
        expect(res.headers.get("ETag")).toBe(full.headers.get("ETag"));
        expect(res.headers.get("Last-Modified")).toBe("Wed, 04 Mar 2026 00:00:00 GMT");
        expect(res.headers.get("Cache-Control")).toBe(full.headers.get("Cache-Control"));
      }
      for (const since of ["Tue, 03 Mar 2026 23:59:59 GMT", "yesterday", "2026-03-05", "Wed, 31 Feb 2026 00:00:00 GMT", ""]) {
        const res = await get(path, { "If-Modified-Since": since }, edge.fetch);
        expect(res.status, `${path} ${since}`).toBe(200);
        expect(await res.text()).toBe(await full.clone().text());
      }
    }
  });

  it("lets If-None-Match decide whenever it is sent (RFC 9110 §13.2.2)", async () => {
    const edge = datedEdge();
    for (const path of ROUTES) {
      const etag = (await get(path, {}, edge.fetch)).headers.get("ETag")!;
      const later = "Tue, 01 Dec 2026 00:00:00 GMT";
      const earlier = "Tue, 03 Mar 2026 00:00:00 GMT";
      expect((await get(path, { "If-None-Match": '"stale"', "If-Modified-Since": later }, edge.fetch)).status, path).toBe(200);
      const matched = await get(path, { "If-None-Match": etag, "If-Modified-Since": earlier }, edge.fetch);
      expect(matched.status, path).toBe(304);
      expect(matched.headers.get("Last-Modified"), path).toBe("Wed, 04 Mar 2026 00:00:00 GMT");
    }
  });

  it("answers HEAD like GET", async () => {
    const edge = datedEdge();
    for (const path of ROUTES) {
      const head = await edge.fetch(new Request(`${ORIGIN}${path}`, { method: "HEAD" }));
      expect(head.status, path).toBe(200);
      expect(head.headers.get("Last-Modified"), path).toBe("Wed, 04 Mar 2026 00:00:00 GMT");
      const since = await edge.fetch(new Request(`${ORIGIN}${path}`, { method: "HEAD", headers: { "If-Modified-Since": "Wed, 04 Mar 2026 00:00:00 GMT" } }));
      expect(since.status, path).toBe(304);
    }
  });
});
