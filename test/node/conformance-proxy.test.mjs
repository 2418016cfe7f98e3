// The conformance proxy (scripts/conformance/proxy.mjs) in Node, in front of a
// fake deployment that records what reaches it: the tokens the edge's own
// verifier accepts, the tenant and push config it adds, message ids made
// unique with their prefix kept, streams relayed as they come, a body it
// cannot read forwarded byte for byte, and the card it serves as its own;
// on both bindings, JSON-RPC and HTTP+JSON.
import { createServer } from "node:http";
import { verifyAgentCardSignature } from "@a2a-js/sdk";
import { GatekeeperJwks, buildCardWire, loadSigningKey, signCard, verifyGatekeeperToken } from "@dynamicagents/core/a2a";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { A2A_PATH, A2A_REST_PATH, CARD_PATH, endpointOf, restEndpointOf } from "../../src/a2a/wire.ts";
import { closeServer, listen } from "../../scripts/dev/http.mjs";
import { CONFORMANCE_TENANT, startConformanceProxy } from "../../scripts/conformance/proxy.mjs";
import { freshAgentJwk } from "./support/fake-agent.mjs";

const MANIFEST = {
  name: "Fake conformance agent",
  description: "A test double of the deployment behind the proxy.",
  version: "0.0.1",
  skills: [{ id: "s", name: "S", description: "Scenarios.", tags: ["test"] }],
};

/** When the fake deployment's version was uploaded, as its card route says. */
const UPSTREAM_LAST_MODIFIED = "Wed, 04 Mar 2026 10:00:00 GMT";

/**
 * A stand-in for the deployment: every POST to /a2a is recorded (headers and
 * the raw bytes) and answered by `answer`; GetExtendedAgentCard gets a card
 * signed with the core's own code, as the Worker signs it.
 */
async function startFakeDeployment() {
  const secret = await freshAgentJwk("a2a-upstream");
  /** @type {Array<{ headers: import("node:http").IncomingHttpHeaders, raw: Buffer }>} */
  const calls = [];
  /** @type {Array<{ method: string, url: string, headers: import("node:http").IncomingHttpHeaders, raw: Buffer }>} */
  const restCalls = [];
  /** How the next HTTP+JSON calls are answered; the default echoes what came. */
  let restAnswer = async (call, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ echo: { method: call.method, url: call.url, body: call.raw.toString("utf8") } }));
  };
  /** How the next calls are answered; the default echoes the call as the result. */
  let answer = async (call, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: call?.id ?? null, result: { echo: call } }));
  };
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const raw = Buffer.concat(chunks);
    const path = new URL(req.url ?? "/", origin).pathname;
    if (req.method === "GET" && path === CARD_PATH) {
      // Only its validators matter here: the proxy serves the tenant's card, not this one.
      res.writeHead(200, { "Content-Type": "application/json", "Last-Modified": UPSTREAM_LAST_MODIFIED });
      res.end("{}");
      return;
    }
    if (path.startsWith(`${A2A_REST_PATH}/`)) {
      const call = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, raw };
      restCalls.push(call);
      if (req.method === "GET" && path === `${A2A_REST_PATH}/${CONFORMANCE_TENANT}/extendedAgentCard`) {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify(await card(CONFORMANCE_TENANT)));
        return;
      }
      await restAnswer(call, res);
      return;
    }
    if (req.method !== "POST" || path !== A2A_PATH) {
      res.writeHead(404).end();
      return;
    }
    calls.push({ headers: req.headers, raw });
    let call;
    try {
      call = JSON.parse(raw.toString("utf8"));
    } catch {
      call = undefined;
    }
    if (call?.method === "GetExtendedAgentCard") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result: await card(call.params.tenant) }));
      return;
    }
    await answer(call, res);
  });
  const origin = `http://127.0.0.1:${await listen(server, 0, "the fake deployment", "")}`;
  /** A tenant's card, both interfaces, signed with the core's own code as the Worker signs it. */
  const card = async (tenant) =>
    signCard(buildCardWire(MANIFEST, { endpoint: endpointOf(origin), restEndpoint: restEndpointOf(origin), tenant }), await loadSigningKey(secret), origin);
  /** The last call that reached it. */
  const last = () => {
    const call = calls.at(-1);
    if (!call) throw new Error("no call reached the fake deployment");
    return call;
  };
  return {
    origin,
    calls,
    last,
    /** The JSON body of the last call that reached it. */
    lastCall: () => JSON.parse(last().raw.toString("utf8")),
    answerWith: (fn) => {
      answer = fn;
    },
    restCalls,
    restAnswerWith: (fn) => {
      restAnswer = fn;
    },
    close: () => closeServer(server),
  };
}

let upstream;
let proxy;
beforeEach(async () => {
  upstream = await startFakeDeployment();
  proxy = await startConformanceProxy({ upstream: upstream.origin, port: 0 });
});
afterEach(async () => {
  await proxy.close();
  await upstream.close();
});

/** Where the proxy takes the pushes for a push URL the suite gave. */
const relayUrl = (url) => `${proxy.origin}/a2a/relay/${Buffer.from(url).toString("base64url")}`;

/** A response's JSON body, untyped, for the assertions. */
const json = async (response) => /** @type {any} */ (await response.json());

/** A call as the suite sends it: no token, no tenant, no push config. */
const suiteCall = (body, headers = {}) =>
  fetch(`${proxy.origin}${A2A_PATH}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...headers },
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
const send = (messageId, extra = {}) =>
  suiteCall({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId, role: "ROLE_USER", parts: [{ text: "hi" }] }, ...extra } });

describe("what the proxy adds", () => {
  it("a fresh token per call, minted for the conformance tenant, that the edge's verifier accepts against the proxy's JWKS", async () => {
    await send("tck-complete-task-1");
    await suiteCall({ jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: "t" } });
    const tokens = upstream.calls.map((c) => /^Bearer (.+)$/.exec(c.headers.authorization ?? "")?.[1]);
    expect(tokens.every(Boolean)).toBe(true);
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const token of tokens) {
      const caller = await verifyGatekeeperToken(token, {
        allowlist: new Set([proxy.origin]),
        audience: endpointOf(upstream.origin),
        jwks: new GatekeeperJwks(),
      });
      expect(caller).toMatchObject({ tenant: CONFORMANCE_TENANT, issuer: proxy.origin, identity: { key: proxy.identity.key } });
    }
  });

  it("params.tenant on every call, a token the suite sent replaced", async () => {
    await suiteCall({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t", tenant: "someone-else" } }, { Authorization: "Bearer from-the-suite" });
    expect(upstream.lastCall().params).toEqual({ id: "t", tenant: CONFORMANCE_TENANT });
    expect(upstream.last().headers.authorization).not.toBe("Bearer from-the-suite");
    await suiteCall({ jsonrpc: "2.0", id: 2, method: "ListTasks" });
    expect(upstream.lastCall()).toMatchObject({ id: 2, method: "ListTasks", params: { tenant: CONFORMANCE_TENANT } });
  });

  it("a push config pointing at the proxy on a send without one; one the suite gave is kept, on a relay path of the proxy", async () => {
    await send("tck-complete-task-1", { configuration: { returnImmediately: false } });
    expect(upstream.lastCall().params.configuration).toEqual({
      returnImmediately: false,
      taskPushNotificationConfig: { url: proxy.pushUrl, token: proxy.notificationToken },
    });
    const own = { url: "http://localhost:4567/webhook", token: "theirs", authentication: { scheme: "Bearer", credentials: "c" } };
    await send("tck-complete-task-2", { configuration: { taskPushNotificationConfig: own } });
    expect(upstream.lastCall().params.configuration.taskPushNotificationConfig).toEqual({ ...own, url: relayUrl(own.url) });
    // Under its proto name it is one too (the deployment reads both), and keeps that name.
    await send("tck-complete-task-3", { configuration: { task_push_notification_config: own } });
    expect(upstream.lastCall().params.configuration).toEqual({ task_push_notification_config: { ...own, url: relayUrl(own.url) } });
    // Not a send: nothing added.
    await suiteCall({ jsonrpc: "2.0", id: 3, method: "GetTask", params: { id: "t" } });
    expect(upstream.lastCall().params.configuration).toBeUndefined();
  });

  it("CreateTaskPushNotificationConfig: the URL on a relay path, and every config's URL given back as the suite sent it", async () => {
    const url = "https://example.com/tck-push-webhook";
    upstream.answerWith(async (call, res) => {
      const config = { id: "p", taskId: "t", url: call.params.url ?? relayUrl(url) };
      const result = call.method === "ListTaskPushNotificationConfigs" ? { configs: [config], nextPageToken: "" } : config;
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result }));
    });
    const created = await json(await suiteCall({ jsonrpc: "2.0", id: 1, method: "CreateTaskPushNotificationConfig", params: { task_id: "t", id: "p", url } }));
    expect(upstream.lastCall().params).toEqual({ task_id: "t", id: "p", url: relayUrl(url), tenant: CONFORMANCE_TENANT });
    expect(created.result).toEqual({ id: "p", taskId: "t", url });
    const got = await json(await suiteCall({ jsonrpc: "2.0", id: 2, method: "GetTaskPushNotificationConfig", params: { task_id: "t", id: "p" } }));
    expect(got.result.url).toBe(url);
    const listed = await json(await suiteCall({ jsonrpc: "2.0", id: 3, method: "ListTaskPushNotificationConfigs", params: { task_id: "t" } }));
    expect(listed.result).toEqual({ configs: [{ id: "p", taskId: "t", url }], nextPageToken: "" });
  });

  it("serves the interface URL with the slash clients append", async () => {
    const reply = await fetch(`${proxy.origin}${A2A_PATH}/`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: "t" } }),
    });
    expect(reply.status).toBe(200);
    expect(upstream.lastCall()).toMatchObject({ id: 7, method: "GetTask", params: { id: "t", tenant: CONFORMANCE_TENANT } });
  });

  it("every send gets a message id of its own, the prefix that picks the scenario kept", async () => {
    await send("tck-artifact-file-url-abc");
    await send("tck-artifact-file-url-abc");
    await suiteCall({
      jsonrpc: "2.0",
      id: 9,
      method: "SendStreamingMessage",
      params: { message: { messageId: "tck-stream-001-abc", role: "ROLE_USER", parts: [{ text: "s" }] } },
    });
    await suiteCall({
      jsonrpc: "2.0",
      id: 10,
      method: "SendMessage",
      params: { message: { message_id: "tck-complete-task-abc", role: "ROLE_USER", parts: [{ text: "s" }] } },
    });
    // Under its proto name too, which it keeps.
    expect(upstream.lastCall().params.message.message_id).toMatch(/^tck-complete-task-abc-[0-9a-f-]{36}$/);
    expect(upstream.lastCall().params.message.messageId).toBeUndefined();
    upstream.calls.pop();
    const ids = upstream.calls.map((c) => JSON.parse(c.raw.toString("utf8")).params.message.messageId);
    expect(ids[0]).toMatch(/^tck-artifact-file-url-abc-[0-9a-f-]{36}$/);
    expect(ids[1]).toMatch(/^tck-artifact-file-url-abc-[0-9a-f-]{36}$/);
    expect(ids[1]).not.toBe(ids[0]);
    expect(ids[2]).toMatch(/^tck-stream-001-abc-[0-9a-f-]{36}$/);
    // The rest of the message travels as it was.
    expect(upstream.lastCall().params.message).toMatchObject({ role: "ROLE_USER", parts: [{ text: "s" }] });
  });

  it("takes pushes at its push URL and keeps them", async () => {
    const reply = await fetch(proxy.pushUrl, {
      method: "POST",
      headers: { "Content-Type": "application/a2a+json", "x-a2a-notification-token": proxy.notificationToken, "x-dynamicagents-event-seq": "3" },
      body: JSON.stringify({ task: { id: "task-1", contextId: "c", status: { state: "TASK_STATE_COMPLETED" } } }),
    });
    expect(reply.status).toBe(200);
    expect(proxy.pushes.at(-1)).toMatchObject({ kind: "task", taskId: "task-1", state: "TASK_STATE_COMPLETED", seq: "3", tokenMatches: true });
  });
});

describe("the suite's own push receiver, relayed", () => {
  it("a push to a relay path reaches the receiver on this machine as it came, and its answer goes back", async () => {
    /** @type {Array<{ path: string, headers: import("node:http").IncomingHttpHeaders, body: string }>} */
    const received = [];
    const receiver = createServer(async (req, res) => {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(received.length === 1 ? 200 : 503).end();
    });
    const port = await listen(receiver, 0, "the receiver", "");
    try {
      const body = JSON.stringify({ statusUpdate: { taskId: "t-9", contextId: "c", status: { state: "TASK_STATE_WORKING" } } });
      const headers = { "Content-Type": "application/a2a+json", Authorization: "Bearer tck-credentials", "x-dynamicagents-event-seq": "2" };
      const push = (url) => fetch(relayUrl(url), { method: "POST", headers, body });
      expect((await push(`http://localhost:${port}/webhook`)).status).toBe(200);
      expect(received[0]).toMatchObject({ path: "/webhook", body });
      expect(received[0].headers).toMatchObject({
        "content-type": "application/a2a+json",
        authorization: "Bearer tck-credentials",
        "x-dynamicagents-event-seq": "2",
      });
      // The receiver's refusal is the deployment's to see (a 5xx it retries).
      expect((await push(`http://127.0.0.1:${port}/webhook`)).status).toBe(503);
      expect(proxy.pushes.at(-1)).toMatchObject({ kind: "statusUpdate", taskId: "t-9", seq: "2", relayedTo: `http://127.0.0.1:${port}/webhook` });
      // A receiver off this machine is never called: the push is taken here.
      expect((await push("https://example.com/tck-push-webhook")).status).toBe(200);
      expect(received).toHaveLength(2);
      // A relay path the proxy did not make is no relay.
      expect((await fetch(`${proxy.origin}/a2a/relay/not-a-url`, { method: "POST", body })).status).toBe(404);
    } finally {
      await closeServer(receiver);
    }
  });
});

describe("what the proxy leaves alone", () => {
  it("relays a stream as it comes, byte for byte, each event before the next is written", async () => {
    /** @type {(value?: unknown) => void} */
    let release = () => {};
    const gate = new Promise((resolve) => {
      release = resolve;
    });
    const first = 'id: 1\ndata: {"jsonrpc":"2.0","id":9,"result":{"task":{"id":"t"}}}\n\n';
    const second = 'id: 2\ndata: {"jsonrpc":"2.0","id":9,"result":{"statusUpdate":{"taskId":"t"}}}\n\n';
    upstream.answerWith(async (_call, res) => {
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
      res.write(first);
      await gate;
      res.end(second);
    });
    const reply = await suiteCall(
      { jsonrpc: "2.0", id: 9, method: "SendStreamingMessage", params: { message: { messageId: "tck-stream-001", role: "ROLE_USER", parts: [] } } },
      { Accept: "text/event-stream" },
    );
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("text/event-stream");
    expect(upstream.last().headers.accept).toBe("text/event-stream");
    const reader = /** @type {ReadableStream<Uint8Array>} */ (reply.body).getReader();
    const decoder = new TextDecoder();
    let seen = "";
    while (seen.length < first.length) seen += decoder.decode((await reader.read()).value, { stream: true });
    // The first event arrived while the deployment still holds the second.
    expect(seen).toBe(first);
    release();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) seen += decoder.decode(chunk.value, { stream: true });
    expect(seen).toBe(first + second);
  });

  it("forwards a body it cannot parse unchanged, token added, and relays the deployment's refusal", async () => {
    upstream.answerWith(async (_call, res) => {
      res.writeHead(400, { "Content-Type": "application/json" });
      res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
    });
    // Not JSON, and not even UTF-8.
    const bytes = Buffer.concat([Buffer.from('{"jsonrpc": "2.0", "method": '), Buffer.from([0xff, 0xfe]), Buffer.from(" oops")]);
    const reply = await suiteCall(bytes);
    expect(reply.status).toBe(400);
    expect((await json(reply)).error.code).toBe(-32700);
    expect(Buffer.compare(upstream.last().raw, bytes)).toBe(0);
    expect(upstream.last().headers.authorization).toMatch(/^Bearer /);
    expect(upstream.last().headers["a2a-version"]).toBe("1.0");
  });

  it("forwards a body of another content type unchanged, Content-Type included, for the edge's -32005", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } });
    await suiteCall(body, { "Content-Type": "text/plain" });
    expect(upstream.last().raw.toString("utf8")).toBe(body);
    expect(upstream.last().headers["content-type"]).toBe("text/plain");
  });

  it("forwards JSON that is no request object (a batch, array params) unchanged", async () => {
    for (const body of ['[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]', '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}']) {
      await suiteCall(body);
      expect(upstream.last().raw.toString("utf8"), body).toBe(body);
    }
  });
});

describe("the card it serves", () => {
  it("is the conformance tenant's, at the proxy's own endpoint, without a security scheme, re-signed by the proxy", async () => {
    const card = await json(await fetch(`${proxy.origin}${CARD_PATH}`));
    expect(upstream.lastCall()).toMatchObject({ method: "GetExtendedAgentCard", params: { tenant: CONFORMANCE_TENANT } });
    expect(card.name).toBe(MANIFEST.name);
    expect(card.supportedInterfaces).toEqual([
      expect.objectContaining({ url: `${proxy.origin}${A2A_PATH}`, protocolBinding: "JSONRPC", tenant: CONFORMANCE_TENANT }),
      expect.objectContaining({ url: `${proxy.origin}${A2A_REST_PATH}`, protocolBinding: "HTTP+JSON", tenant: CONFORMANCE_TENANT }),
    ]);
    expect(card.securitySchemes).toBeUndefined();
    expect(card.securityRequirements).toBeUndefined();
    const header = JSON.parse(Buffer.from(card.signatures[0].protected, "base64url").toString("utf8"));
    expect(header).toEqual({ alg: "EdDSA", typ: "JOSE", kid: proxy.kid, jku: proxy.jwksUrl });
    const jwks = await json(await fetch(proxy.jwksUrl));
    const key = jwks.keys.find((k) => k.kid === header.kid);
    await expect(verifyAgentCardSignature(async () => key)(card)).resolves.toBeUndefined();
    // Any change breaks it: the signature covers the rewritten card (the SDK logs the failure on console.debug).
    const debug = console.debug;
    console.debug = () => {};
    try {
      await expect(verifyAgentCardSignature(async () => key)({ ...card, name: "tampered" })).rejects.toThrow();
    } finally {
      console.debug = debug;
    }
  });

  it("carries the validators the deployment's card route has, and answers a conditional GET with 304", async () => {
    const url = `${proxy.origin}${CARD_PATH}`;
    const first = await fetch(url);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(first.headers.get("last-modified")).toBe(UPSTREAM_LAST_MODIFIED);
    // The same card again: a run's card, and its ETag, stay the same.
    const again = await fetch(url);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe(await first.text());
    expect((await fetch(url, { headers: { "If-None-Match": /** @type {string} */ (etag) } })).status).toBe(304);
    expect((await fetch(url, { headers: { "If-Modified-Since": UPSTREAM_LAST_MODIFIED } })).status).toBe(304);
    expect((await fetch(url, { headers: { "If-Modified-Since": "Tue, 03 Mar 2026 10:00:00 GMT" } })).status).toBe(200);
    // If-None-Match decides when it is sent.
    expect((await fetch(url, { headers: { "If-None-Match": '"other"', "If-Modified-Since": UPSTREAM_LAST_MODIFIED } })).status).toBe(200);
  });

  it("GetExtendedAgentCard through the proxy answers with the same card", async () => {
    const reply = await json(await suiteCall({ jsonrpc: "2.0", id: 5, method: "GetExtendedAgentCard" }));
    expect(reply.id).toBe(5);
    expect(reply.result.supportedInterfaces[0].url).toBe(`${proxy.origin}${A2A_PATH}`);
    expect(reply.result.signatures).toHaveLength(1);
  });
});

describe("HTTP+JSON through the proxy", () => {
  /** A call as the suite sends it: the route without a tenant, no token. */
  const restCall = (verb, route, body) =>
    fetch(`${proxy.origin}${A2A_REST_PATH}${route}`, {
      method: verb,
      headers: { "A2A-Version": "1.0", ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });

  it("puts the tenant in the path (once), keeps the query, and mints a token per call the edge's verifier accepts", async () => {
    await restCall("GET", "/tasks/t-1?historyLength=2");
    await restCall("GET", `/${CONFORMANCE_TENANT}/tasks?pageSize=1`);
    await restCall("POST", "/tasks/t-1:cancel");
    expect(upstream.restCalls.map((c) => `${c.method} ${c.url}`)).toEqual([
      `GET ${A2A_REST_PATH}/${CONFORMANCE_TENANT}/tasks/t-1?historyLength=2`,
      `GET ${A2A_REST_PATH}/${CONFORMANCE_TENANT}/tasks?pageSize=1`,
      `POST ${A2A_REST_PATH}/${CONFORMANCE_TENANT}/tasks/t-1:cancel`,
    ]);
    // A request with no body goes with none.
    expect(upstream.restCalls.at(-1).raw.length).toBe(0);
    for (const call of upstream.restCalls) {
      const token = /^Bearer (.+)$/.exec(call.headers.authorization ?? "")?.[1] ?? "";
      // The audience is <origin>/a2a on both bindings.
      const caller = await verifyGatekeeperToken(token, {
        allowlist: new Set([proxy.origin]),
        audience: endpointOf(upstream.origin),
        jwks: new GatekeeperJwks(),
      });
      expect(caller).toMatchObject({ tenant: CONFORMANCE_TENANT, identity: { key: proxy.identity.key } });
      expect(call.headers["a2a-version"]).toBe("1.0");
    }
  });

  it("a send: a message id of its own, its prefix kept, and the proxy's push config when it has none; a body's tenant is the conformance tenant", async () => {
    for (const route of ["/message:send", "/message:stream"]) {
      await restCall("POST", route, { message: { messageId: "tck-complete-task-abc", role: "ROLE_USER", parts: [{ text: "hi" }] }, tenant: "other" });
      const body = JSON.parse(upstream.restCalls.at(-1).raw.toString("utf8"));
      expect(body.message.messageId).toMatch(/^tck-complete-task-abc-[0-9a-f-]{36}$/);
      expect(body.configuration).toEqual({ taskPushNotificationConfig: { url: proxy.pushUrl, token: proxy.notificationToken } });
      expect(body.tenant).toBe(CONFORMANCE_TENANT);
    }
  });

  it("a push config: its URL on a relay path, and given back as the suite sent it", async () => {
    const url = "http://localhost:4567/webhook";
    upstream.restAnswerWith(async (call, res) => {
      const config = { id: "p", taskId: "t", url: relayUrl(url) };
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(call.method === "GET" && call.url.endsWith("/pushNotificationConfigs") ? { configs: [config], nextPageToken: "" } : config));
    });
    const created = await json(await restCall("POST", "/tasks/t/pushNotificationConfigs", { id: "p", url }));
    expect(JSON.parse(upstream.restCalls.at(-1).raw.toString("utf8"))).toEqual({ id: "p", url: relayUrl(url) });
    expect(created).toEqual({ id: "p", taskId: "t", url });
    expect((await json(await restCall("GET", "/tasks/t/pushNotificationConfigs/p"))).url).toBe(url);
    expect(await json(await restCall("GET", "/tasks/t/pushNotificationConfigs"))).toEqual({ configs: [{ id: "p", taskId: "t", url }], nextPageToken: "" });
  });

  it("the extended card is the one the proxy serves; the deployment's refusals (404, 405, 415) and a body it cannot read pass unchanged", async () => {
    const card = await json(await restCall("GET", "/extendedAgentCard"));
    expect(card).toEqual(await json(await fetch(`${proxy.origin}${CARD_PATH}`)));
    upstream.restAnswerWith(async (call, res) => {
      res.writeHead(call.method === "PUT" ? 405 : 415, { "Content-Type": "application/json", ...(call.method === "PUT" ? { Allow: "GET" } : {}) });
      res.end(JSON.stringify({ error: { code: call.method === "PUT" ? 405 : 415, status: "X", message: "refused", details: [] } }));
    });
    const wrongVerb = await restCall("PUT", "/tasks/t");
    expect(wrongVerb.status).toBe(405);
    expect(wrongVerb.headers.get("allow")).toBe("GET");
    const notJson = await fetch(`${proxy.origin}${A2A_REST_PATH}/message:send`, {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: "{not json",
    });
    expect(notJson.status).toBe(415);
    expect(upstream.restCalls.at(-1).raw.toString("utf8")).toBe("{not json");
    expect(upstream.restCalls.at(-1).headers["content-type"]).toBe("text/plain");
  });

  it("relays a stream as it comes", async () => {
    const event = 'id: 1\ndata: {"task":{"id":"t"}}\n\n';
    upstream.restAnswerWith(async (_call, res) => {
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      res.end(event);
    });
    const reply = await fetch(`${proxy.origin}${A2A_REST_PATH}/tasks/t:subscribe`, { headers: { Accept: "text/event-stream", "Last-Event-ID": "0" } });
    expect(reply.headers.get("content-type")).toBe("text/event-stream");
    expect(await reply.text()).toBe(event);
    expect(upstream.restCalls.at(-1)).toMatchObject({ method: "GET", url: `${A2A_REST_PATH}/${CONFORMANCE_TENANT}/tasks/t:subscribe` });
    expect(upstream.restCalls.at(-1).headers["last-event-id"]).toBe("0");
  });
});
