import { describe, expect, it } from "vitest";
import { ENDPOINT, ORIGIN } from "./support/constants.js";
import { mintToken } from "./support/gatekeeper.js";
import { isolatedEdge, type IsolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, post, type CallOptions, type RpcReply } from "./support/rpc.js";

// docs/protocol.md "The edge, in order": one spec per step with its status,
// then requests that fail two steps at once, where the earlier step must win.
// Steps 1 to 8 never address a Durable Object.

const getTask = (id = 1) => JSON.stringify({ jsonrpc: "2.0", id, method: "GetTask", params: { tenant: "assistant", id: "t-1" } });

async function send(body: string, options: CallOptions & { edge?: IsolatedEdge } = {}): Promise<RpcReply & { doAccesses: number; fetches: number }> {
  using outbound = interceptOutbound();
  const edge = options.edge ?? isolatedEdge();
  const reply = await post(body, { ...options, worker: edge.fetch });
  return { ...reply, doAccesses: edge.doAccesses(), fetches: outbound.requests.length };
}

function expectTokenRefused(reply: RpcReply & { doAccesses: number }, check: string) {
  expect(reply.status).toBe(401);
  expect(reply.headers.get("WWW-Authenticate")).toMatch(/^Bearer error="invalid_token"/);
  expect(reply.body).toEqual({ error: "invalid_token", error_description: expect.any(String), check });
  expect(reply.doAccesses).toBe(0);
}

function expectRpcError(reply: RpcReply & { doAccesses: number }, status: number, code: number) {
  expect(reply.status).toBe(status);
  expect(reply.body).toMatchObject({ jsonrpc: "2.0", error: { code } });
  expect(reply.doAccesses).toBe(0);
}

describe("the edge, step by step", () => {
  it("1. host: another host than PUBLIC_ORIGIN gets 421, whatever else is wrong", async () => {
    const edge = isolatedEdge({}, { PUBLIC_ORIGIN: "https://agents.example.test" });
    const reply = await send("{not json", { edge, token: null, headers: { "Content-Type": "text/plain" } });
    expect(reply.status).toBe(421);
    expect(reply.body).toMatchObject({ error: "misdirected_request" });
    expect(reply.doAccesses).toBe(0);
  });

  it("2. token: no Authorization at all gets 401 with a bare challenge and the JSON body naming the check", async () => {
    const reply = await send(getTask(), { token: null });
    expect(reply.status).toBe(401);
    expect(reply.headers.get("WWW-Authenticate")).toBe('Bearer realm="a2a"');
    expect(reply.body).toEqual({ error: "invalid_token", error_description: expect.stringMatching(/bearer token is required/), check: "bearer" });
    expect(reply.doAccesses).toBe(0);
    expect(reply.fetches).toBe(0);
    // An empty header is no token either.
    const empty = await send(getTask(), { token: null, headers: { Authorization: "" } });
    expect(empty.status).toBe(401);
    expect(empty.headers.get("WWW-Authenticate")).toBe('Bearer realm="a2a"');
    expect(empty.body.check).toBe("bearer");
  });

  it("2. token: a malformed Authorization header is the contract's 401, not bearer-auth's 400", async () => {
    const token = await mintToken();
    for (const authorization of ["Bearer", "Basic dXNlcjpwYXNz", `Bearer ${token} extra`, "Bearer a b", "Bearer t*ken", `Token ${token}`]) {
      const reply = await send(getTask(), { token: null, headers: { Authorization: authorization } });
      expectTokenRefused(reply, "bearer");
      expect(reply.fetches, authorization).toBe(0);
    }
  });

  it("2. token: a refused token is 401 invalid_token naming its check", async () => {
    expectTokenRefused(await send(getTask(), { token: "not-a-jwt" }), "bearer");
    expectTokenRefused(await send(getTask(), { token: await mintToken({ jku: null }) }), "jku-present");
  });

  it("2. token: accepted case-insensitively as a Bearer scheme (RFC 6750 §2.1)", async () => {
    const reply = await send(getTask(), { token: null, headers: { Authorization: `bearer ${await mintToken()}` } });
    expect(reply.status).toBe(200);
    expect(reply.body.error.code).toBe(-32001);
  });

  it("3. Content-Type: JSON in any spelling is accepted (parameters and case ignored, application/*+json)", async () => {
    for (const type of [
      "application/json",
      "application/json; charset=utf-8",
      "APPLICATION/JSON;Charset=UTF-8",
      "application/a2a+json",
      "application/vnd.example+json; v=1",
      "Application/A2A+JSON; Charset=UTF-8",
      'application/json; charset="utf-8"; q=0.5',
      "  application/json  ",
      "application/problem+json;profile=x",
    ]) {
      const reply = await send(getTask(), { headers: { "Content-Type": type } });
      expect(reply.status, type).toBe(200);
      expect(reply.body.error.code, type).toBe(-32001);
    }
  });

  it("3. Content-Type: anything else, or none, is -32005 with HTTP 415", async () => {
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonp",
      "text/json",
      "application/json-seq",
      "application/json+xml",
      "application/+json",
      "application /json",
      "json",
      "",
      null,
    ]) {
      const reply = await send(getTask(), { headers: { "Content-Type": type } });
      expectRpcError(reply, 415, -32005);
      expect(reply.body.id, String(type)).toBeNull();
    }
  });

  it("4. body over the limit is -32600 with HTTP 413, declared or streamed", async () => {
    const edge = isolatedEdge({ maxBodyBytes: 1024 });
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { tenant: "assistant", id: "x".repeat(2048) } });
    expectRpcError(await send(big, { edge }), 413, -32600);

    // A body with no Content-Length is counted as it streams.
    using _ = interceptOutbound();
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.slice(i, i + 256));
        controller.close();
      },
    });
    const request = new Request(ENDPOINT, {
      method: "POST",
      headers: { Authorization: `Bearer ${await mintToken()}`, "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: stream,
    });
    expect(request.headers.has("Content-Length")).toBe(false);
    const response = await edge.fetch(request);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
    expect(edge.doAccesses()).toBe(0);
  });

  it("4. at the default limit: 2 MiB passes, one byte more is -32600 with HTTP 413", async () => {
    const edge = isolatedEdge();
    const call = getTask();
    const at = call + " ".repeat(2 * 1024 * 1024 - new TextEncoder().encode(call).length);
    expect(new TextEncoder().encode(at).length).toBe(2 * 1024 * 1024);
    const fits = await send(at, { edge });
    expect(fits.status).toBe(200);
    expect(fits.body.error.code).toBe(-32001);
    expectRpcError(await send(`${at} `, { edge: isolatedEdge() }), 413, -32600);
  });

  it("5. A2A-Version: major.minor 1.0 passes, a patch level is ignored", async () => {
    for (const version of ["1.0", "1.0.3", " 1.0 ", "1.0.0", "1.0.99"]) {
      const reply = await send(getTask(), { headers: { "A2A-Version": version } });
      expect(reply.status, version).toBe(200);
      expect(reply.body.error.code, version).toBe(-32001);
    }
  });

  it("5. A2A-Version: anything else, none (v0.3) or a bare major is -32009 with HTTP 200, before the body is read", async () => {
    for (const version of [null, "", "0.3", "1", "1.1", "2.0", "1.0-beta", "v1.0"]) {
      const reply = await send(getTask(7), { headers: { "A2A-Version": version } });
      expectRpcError(reply, 200, -32009);
      // The body is step 6: its id is not known yet.
      expect(reply.body.id, String(version)).toBeNull();
    }
  });

  it("6. unparsable JSON is -32700, a non-request (a batch included) -32600, both HTTP 400", async () => {
    expectRpcError(await send("{not json"), 400, -32700);
    expectRpcError(await send("\u00ff\u00fe"), 400, -32700);
    for (const body of [
      "[]",
      `[${getTask()}]`,
      `[${getTask(1)},${getTask(2)}]`,
      "[1]",
      "42",
      '"GetTask"',
      "true",
      "null",
      '{"jsonrpc":"2.0","method":"GetTask"}',
    ]) {
      expectRpcError(await send(body), 400, -32600);
    }
    const keepsId = await send('{"jsonrpc":"2.0","id":"abc","method":""}');
    expect(keepsId.body.id).toBe("abc");
  });

  it("7. params.tenant missing or not the token's tenant is the token's 401", async () => {
    const noTenant = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t-1" } });
    expectTokenRefused(await send(noTenant), "tenant-claim");
    const other = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { tenant: "researcher", id: "t-1" } });
    expectTokenRefused(await send(other), "tenant-claim");
  });

  it("8. an unknown tenant is -32602 with HTTP 404", async () => {
    using _ = interceptOutbound();
    const edge = isolatedEdge();
    const reply = await call("GetTask", { id: "t" }, { worker: edge.fetch, mint: { tenant: "ghost" }, id: 9 });
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ id: 9, error: { code: -32602 } });
    expect(edge.doAccesses()).toBe(0);
  });

  it("9. an unknown method is -32601 and bad params -32602, both HTTP 200", async () => {
    using _ = interceptOutbound();
    const unknown = await call("NoSuchMethod");
    expect(unknown.status).toBe(200);
    expect(unknown.body.error.code).toBe(-32601);
    const bad = await call("GetTask", { id: 7 });
    expect(bad.status).toBe(200);
    expect(bad.body.error.code).toBe(-32602);
  });
});

describe("two failures at once: the earlier step wins", () => {
  it("a bad token and a bad Content-Type: 401", async () => {
    expectTokenRefused(await send(getTask(), { token: "not-a-jwt", headers: { "Content-Type": "text/plain" } }), "bearer");
  });

  it("a bad Content-Type and a huge body: 415", async () => {
    const edge = isolatedEdge({ maxBodyBytes: 64 });
    expectRpcError(await send(getTask() + " ".repeat(1024), { edge, headers: { "Content-Type": "text/plain" } }), 415, -32005);
  });

  it("a huge body and no A2A-Version: 413", async () => {
    const edge = isolatedEdge({ maxBodyBytes: 64 });
    expectRpcError(await send(getTask() + " ".repeat(1024), { edge, headers: { "A2A-Version": null } }), 413, -32600);
  });

  it("no A2A-Version and unparsable JSON: -32009", async () => {
    expectRpcError(await send("{not json", { headers: { "A2A-Version": null } }), 200, -32009);
  });

  it("a batch whose tenant differs from the token's: 400, the envelope comes first", async () => {
    const batch = JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "GetTask", params: { tenant: "researcher", id: "t" } }]);
    expectRpcError(await send(batch), 400, -32600);
  });

  it("a tenant claim naming an unknown tenant that params.tenant does not repeat: 401, not 404", async () => {
    expectTokenRefused(await send(getTask(), { mint: { tenant: "ghost" } }), "tenant-claim");
  });

  it("an unknown tenant and an unknown method: 404", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "NoSuchMethod", params: { tenant: "ghost" } });
    expectRpcError(await send(body, { mint: { tenant: "ghost" } }), 404, -32602);
  });
});

describe("no request, however malformed, gets a 5xx", () => {
  it("answers every one of these below 500", async () => {
    const token = await mintToken();
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const cases: Array<[string, string, Record<string, string | null>]> = [
      ["binary", "\u0000\u0001\u0002", {}],
      ["deeply nested", deep, {}],
      ["params a string", '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":"x"}', {}],
      ["tenant an object", '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"tenant":{}}}', {}],
      ["method a number", '{"jsonrpc":"2.0","id":1,"method":7,"params":{"tenant":"assistant"}}', {}],
      ["id an object", '{"jsonrpc":"2.0","id":{},"method":"GetTask","params":{"tenant":"assistant"}}', {}],
      ["proto pollution", '{"jsonrpc":"2.0","id":1,"method":"__proto__","params":{"tenant":"assistant","__proto__":{"x":1}}}', {}],
      [
        "SendMessage with junk parts",
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "SendMessage",
          params: { tenant: "assistant", message: { messageId: "m", role: "ROLE_USER", parts: [{ file: {} }] } },
        }),
        {},
      ],
      ["ListTasks with a huge pageSize", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: { tenant: "assistant", pageSize: 1e308 } }), {}],
      ["a version full of dots", getTask(), { "A2A-Version": "1.0.0.0.0" }],
      ["a Content-Type full of junk", getTask(), { "Content-Type": ";;;==;" }],
    ];
    for (const [label, body, headers] of cases) {
      const reply = await send(body, { token, headers });
      expect(reply.status, label).toBeLessThan(500);
    }
    // Tokens that are JWS-shaped but wrong inside.
    const segment = (value: unknown) => btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    for (const header of [{ alg: "EdDSA", jku: 5 }, { alg: "EdDSA", jku: `${"https://gatekeeper.test"}/.well-known/jwks.json`, kid: {} }, [], "x"]) {
      const forged = `${segment(header)}.${segment({ iss: "https://gatekeeper.test" })}.${"A".repeat(86)}`;
      const reply = await send(getTask(), { token: forged });
      expect(reply.status, JSON.stringify(header)).toBe(401);
    }
    // Other methods and paths, and conditional headers full of junk.
    const edge = isolatedEdge();
    for (const [method, path, headers] of [
      ["PUT", "/a2a", {}],
      ["OPTIONS", "/a2a", {}],
      ["HEAD", "/a2a", {}],
      ["POST", "/.well-known/agent-card.json", {}],
      ["GET", "/%E0%A4%A", {}],
      ["GET", "/.well-known/agent-card.json", { "If-Modified-Since": ";;,, GMT", "If-None-Match": "W/" }],
      ["GET", "/.well-known/jwks.json", { "If-Modified-Since": "Sun, 99 Foo 99999 99:99:99 GMT" }],
    ] as const) {
      const response = await edge.fetch(new Request(`${ORIGIN}${path}`, { method, headers }));
      expect(response.status, `${method} ${path}`).toBeLessThan(500);
    }
    const empty = await send("", { token });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe(-32700);
  });
});

it("answers GET /a2a with 405 and no token check", async () => {
  const edge = isolatedEdge();
  const response = await edge.fetch(new Request(`${ORIGIN}/a2a`));
  expect(response.status).toBe(405);
  expect(response.headers.get("Allow")).toBe("POST");
});

it("serves POST /a2a/ as /a2a: clients append the slash to the interface URL", async () => {
  const edge = isolatedEdge();
  const reply = await send(getTask(), { edge, endpoint: `${ENDPOINT}/` });
  // Every step ran as on /a2a (the token's audience is still <origin>/a2a), and the method answered.
  expect(reply.status).toBe(200);
  expect(reply.body).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32001 } });
  expectTokenRefused(await send(getTask(), { edge: isolatedEdge(), endpoint: `${ENDPOINT}/`, token: "not-a-jwt" }), "bearer");
  expect((await edge.fetch(new Request(`${ENDPOINT}/`))).status).toBe(405);
  expect((await edge.fetch(new Request(`${ENDPOINT}//`, { method: "POST" }))).status).toBe(404);
});
