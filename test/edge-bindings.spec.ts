import { quotaExceeded, RpcError } from "@dynamicagents/core/a2a";
import { describe, expect, it } from "vitest";
import type { A2AMethod } from "../src/a2a/methods.js";
import { rpcBody } from "../src/testing/rpc-client.js";
import { ENDPOINT, ORIGIN } from "./support/constants.js";
import { mintToken, type MintOptions } from "./support/gatekeeper.js";
import { isolatedEdge, stubAgent, type IsolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { REST_ENDPOINT, restRequest } from "./support/rest.js";

// docs/protocol.md "The edge, in order", for both bindings from one table:
// each row is a request with something wrong (or two things), sent once as
// JSON-RPC on /a2a and once as HTTP+JSON under /a2a/rest/{tenant}, and the
// step that must refuse it, with the status and body each binding answers.
// Steps 1 to 8 never address a Durable Object. Then the errors a method
// raises, from one table too: the same ErrorInfo, each binding's status.

type BindingName = "JSON-RPC" | "HTTP+JSON";
const BOTH: BindingName[] = ["JSON-RPC", "HTTP+JSON"];

/** A request, as both bindings send it. */
interface Shape {
  method?: A2AMethod;
  params?: Record<string, unknown>;
  /** The token: minted with `mint` unless given (`null`: none). */
  token?: string | null;
  mint?: MintOptions;
  headers?: Record<string, string | null>;
  /** The whole body as sent, in place of the call's. */
  body?: string;
  /** The tenant the request is addressed to (JSON-RPC's params.tenant, HTTP+JSON's path); `null`: none. */
  tenant?: string | null;
  /** HTTP+JSON: another verb, or a path (below /a2a/rest) of no route. */
  verb?: string;
  path?: string;
  edge?: () => IsolatedEdge;
}

type Refusal =
  | { misdirected: true }
  | { token: string }
  /** An A2A or JSON-RPC error: its code, its ErrorInfo reason (none for JSON-RPC's own), and each binding's status. */
  | { code: number; reason?: string; status: number | Record<BindingName, number>; allow?: string };

interface Row extends Shape {
  name: string;
  only?: BindingName;
  refused: Refusal;
  /** A method's own error: the caller's object was asked. */
  reachesObject?: true;
}

/** Every row's call unless it says otherwise: a POST with a JSON body on both bindings, for a task no one has. */
const CANCEL = { method: "CancelTask" as const, params: { id: "t-1", metadata: { note: "edge" } } };
const big = { params: { id: "t-1", metadata: { pad: "x".repeat(2048) } }, edge: () => isolatedEdge({ maxBodyBytes: 1024 }) };
const denyAll = () => isolatedEdge({ rateLimiter: () => ({ limit: async () => ({ success: false }) }), rateLimitRetryAfterSeconds: 7 });

const ROWS: Row[] = [
  {
    name: "1. another host than PUBLIC_ORIGIN: 421",
    edge: () => isolatedEdge({}, { PUBLIC_ORIGIN: "https://agents.example.test" }),
    refused: { misdirected: true },
  },
  { name: "2. no token: 401", token: null, refused: { token: "bearer" } },
  { name: "2. a token that is no JWT: 401", token: "not-a-jwt", refused: { token: "bearer" } },
  { name: "2. a token for <origin>/a2a/rest: 401 (aud is <origin>/a2a for both)", mint: { aud: `${ORIGIN}/a2a/rest` }, refused: { token: "signature" } },
  {
    name: "3. a body that is not JSON by its Content-Type: 415",
    headers: { "Content-Type": "text/plain" },
    refused: { code: -32005, reason: "CONTENT_TYPE_NOT_SUPPORTED", status: 415 },
  },
  { name: "4. a body over the limit: 413", ...big, refused: { code: -32600, status: 413 } },
  {
    name: "5. another A2A-Version: -32009 (JSON-RPC 200, HTTP+JSON 400)",
    headers: { "A2A-Version": "0.3" },
    refused: { code: -32009, reason: "VERSION_NOT_SUPPORTED", status: { "JSON-RPC": 200, "HTTP+JSON": 400 } },
  },
  { name: "6. a body that does not parse: 400", body: "{not json", refused: { code: -32700, status: 400 } },
  { name: "6. a body that is no request (an array): 400", body: "[1]", refused: { code: -32600, status: 400 } },
  { name: "7. no tenant (no params.tenant; the route without {tenant}): 401", tenant: null, refused: { token: "tenant-claim" } },
  { name: "7. another tenant than the token's: 401", tenant: "researcher", refused: { token: "tenant-claim" } },
  {
    name: "7. a body's tenant other than the path's: 401",
    only: "HTTP+JSON",
    params: { id: "t-1", tenant: "researcher" },
    refused: { token: "tenant-claim" },
  },
  {
    name: "7. a query's tenant other than the path's: 401",
    only: "HTTP+JSON",
    method: "GetTask",
    params: { id: "t-1", tenant: "researcher" },
    refused: { token: "tenant-claim" },
  },
  { name: "7. over the rate limit: 429", edge: denyAll, refused: { code: -32000, reason: "QUOTA_EXCEEDED", status: 429 } },
  { name: "8. an unknown tenant: 404", mint: { tenant: "ghost" }, tenant: "ghost", refused: { code: -32602, status: 404 } },
  {
    name: "9. the method's own error: TaskNotFound (JSON-RPC 200, HTTP+JSON 404)",
    refused: { code: -32001, reason: "TASK_NOT_FOUND", status: { "JSON-RPC": 200, "HTTP+JSON": 404 } },
    reachesObject: true,
  },
  // The route, HTTP+JSON's own, right after the token and before anything else.
  {
    name: "2 before the route: no token on a path of no route is 401",
    only: "HTTP+JSON",
    path: "/assistant/nothing-here",
    token: null,
    refused: { token: "bearer" },
  },
  { name: "a path of no route, in either form: 404", only: "HTTP+JSON", path: "/assistant/nothing-here", refused: { code: -32601, status: 404 } },
  { name: "a tenant and nothing else: 404", only: "HTTP+JSON", path: "/assistant", refused: { code: -32601, status: 404 } },
  { name: "the interface URL itself: 404", only: "HTTP+JSON", path: "", refused: { code: -32601, status: 404 } },
  { name: "a known path with another verb: 405 with Allow", only: "HTTP+JSON", verb: "GET", refused: { code: -32601, status: 405, allow: "POST" } },
  {
    name: "the route before step 3: another verb and a bad Content-Type is 405",
    only: "HTTP+JSON",
    verb: "DELETE",
    headers: { "Content-Type": "text/plain" },
    refused: { code: -32601, status: 405, allow: "POST" },
  },
  {
    name: "the route before step 7: the route without {tenant} and another verb is 405",
    only: "HTTP+JSON",
    tenant: null,
    verb: "PUT",
    refused: { code: -32601, status: 405, allow: "POST" },
  },
  // Two failures at once: the earlier step wins, in both bindings.
  { name: "2 before 3: a bad token and a bad Content-Type", token: "not-a-jwt", headers: { "Content-Type": "text/plain" }, refused: { token: "bearer" } },
  {
    name: "3 before 4: a bad Content-Type and a body over the limit",
    ...big,
    headers: { "Content-Type": "text/plain" },
    refused: { code: -32005, reason: "CONTENT_TYPE_NOT_SUPPORTED", status: 415 },
  },
  { name: "4 before 5: a body over the limit and no A2A-Version", ...big, headers: { "A2A-Version": null }, refused: { code: -32600, status: 413 } },
  {
    name: "5 before 6: no A2A-Version and a body that does not parse",
    body: "{not json",
    headers: { "A2A-Version": null },
    refused: { code: -32009, reason: "VERSION_NOT_SUPPORTED", status: { "JSON-RPC": 200, "HTTP+JSON": 400 } },
  },
  {
    name: "6 before 7: a body that does not parse, addressed to another tenant",
    body: "{not json",
    tenant: "researcher",
    refused: { code: -32700, status: 400 },
  },
  { name: "7 before 8: an unknown tenant named by the token only", mint: { tenant: "ghost" }, tenant: "assistant", refused: { token: "tenant-claim" } },
  { name: "7 before 8: no tenant, and the token's unknown", mint: { tenant: "ghost" }, tenant: null, refused: { token: "tenant-claim" } },
];

/** The row's request in `binding`'s form. */
async function requestOf(binding: BindingName, row: Shape): Promise<Request> {
  const { method, params } = { ...CANCEL, ...(row.method ? { method: row.method, params: {} } : {}), ...(row.params ? { params: row.params } : {}) };
  const token = row.token === undefined ? await mintToken(row.mint) : row.token;
  const tenant = row.tenant === undefined ? ((row.mint?.tenant ?? "assistant") as string) : row.tenant;
  if (binding === "HTTP+JSON") {
    const request = restRequest(method, params, { token, tenant, headers: row.headers, verb: row.verb, ...(row.body === undefined ? {} : { body: row.body }) });
    return row.path === undefined ? request : new Request(`${REST_ENDPOINT}${row.path}`, request);
  }
  const headers = new Headers({ "Content-Type": "application/json", "A2A-Version": "1.0" });
  if (token) headers.set("Authorization", `Bearer ${token}`);
  for (const [name, value] of Object.entries(row.headers ?? {})) value === null ? headers.delete(name) : headers.set(name, value);
  const body = row.body ?? rpcBody(method, params, { id: 1, ...(tenant === null ? {} : { tenant }) });
  return new Request(ENDPOINT, { method: "POST", headers, body });
}

async function send(binding: BindingName, row: Shape) {
  using outbound = interceptOutbound();
  const edge = (row.edge ?? isolatedEdge)();
  const response = await edge.fetch(await requestOf(binding, row));
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text), doAccesses: edge.doAccesses(), fetches: outbound.requests.length };
}

describe("the edge, in order, on both bindings", () => {
  for (const row of ROWS) {
    for (const binding of row.only ? [row.only] : BOTH) {
      it(`${binding}: ${row.name}`, async () => {
        const reply = await send(binding, row);
        const { refused } = row;
        expect(reply.doAccesses, "a Durable Object addressed").toBe(row.reachesObject ? reply.doAccesses : 0);
        if ("misdirected" in refused) {
          expect(reply.status).toBe(421);
          expect(reply.body).toMatchObject({ error: "misdirected_request" });
          return;
        }
        if ("token" in refused) {
          // The same 401 for both bindings: not a JSON-RPC body, not AIP-193's.
          expect(reply.status).toBe(401);
          expect(reply.headers.get("WWW-Authenticate")).toMatch(/^Bearer /);
          expect(reply.body).toEqual({ error: "invalid_token", error_description: expect.any(String), check: refused.token });
          return;
        }
        const status = typeof refused.status === "number" ? refused.status : refused.status[binding];
        expect(reply.status).toBe(status);
        expect(reply.headers.get("Allow")).toBe(refused.allow ?? null);
        const info = refused.reason ? [expect.objectContaining({ reason: refused.reason })] : expect.anything();
        if (binding === "JSON-RPC") {
          expect(reply.body).toMatchObject({ jsonrpc: "2.0", error: { code: refused.code } });
          if (refused.reason) expect(reply.body.error.data).toEqual(info);
        } else {
          expect(reply.body).toEqual({
            error: { code: status, status: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String), details: expect.any(Array) },
          });
          if (refused.reason) expect(reply.body.error.details).toEqual(info);
          else expect(reply.body.error.details).toEqual([]);
        }
      });
    }
  }
});

describe("HTTP+JSON: a request with no body passes steps 3, 4 and 6", () => {
  const cases: Array<[string, Shape]> = [
    ["a GET, whatever its Content-Type says", { method: "GetTask", params: { id: "t-1" }, headers: { "Content-Type": "text/plain" } }],
    ["a POST with no body and no Content-Type (a cancel)", { method: "CancelTask", params: { id: "t-1" }, headers: { "Content-Type": null } }],
    [
      "a POST with no body, Content-Type JSON (as @a2a-js/sdk sends it), on an edge taking 1 byte",
      { method: "CancelTask", params: { id: "t-1" }, headers: { "Content-Type": "application/json" }, edge: () => isolatedEdge({ maxBodyBytes: 1 }) },
    ],
    ["a POST with an empty body", { method: "CancelTask", params: { id: "t-1" }, body: "" }],
  ];
  for (const [name, request] of cases) {
    it(name, async () => {
      const reply = await send("HTTP+JSON", request);
      // The method answered: the task is no one's.
      expect(reply.status).toBe(404);
      expect(reply.body.error.details).toEqual([expect.objectContaining({ reason: "TASK_NOT_FOUND" })]);
    });
  }

  it("a POST with a body is checked: a bad Content-Type is 415", async () => {
    const reply = await send("HTTP+JSON", { method: "CancelTask", params: { id: "t-1", metadata: {} }, headers: { "Content-Type": "text/plain" } });
    expect(reply.status).toBe(415);
  });
});

describe("a method's errors on both bindings, from one table", () => {
  const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";
  // code, reason (A2A's; none for JSON-RPC's own), JSON-RPC's status, HTTP+JSON's status and google.rpc.Code (A2A 1.0 §5.4).
  const TABLE: Array<[RpcError, number, number, string]> = [
    [new RpcError(-32001, "no such task"), 200, 404, "NOT_FOUND"],
    [new RpcError(-32002, "finished"), 200, 409, "FAILED_PRECONDITION"],
    [new RpcError(-32003, "no pushes"), 200, 400, "UNIMPLEMENTED"],
    [new RpcError(-32004, "not now"), 200, 400, "UNIMPLEMENTED"],
    [new RpcError(-32005, "not that type"), 200, 415, "INVALID_ARGUMENT"],
    [new RpcError(-32006, "the agent answered nonsense"), 200, 502, "INTERNAL"],
    [new RpcError(-32007, "no extended card"), 200, 400, "FAILED_PRECONDITION"],
    [new RpcError(-32008, "extension required"), 200, 400, "FAILED_PRECONDITION"],
    [new RpcError(-32009, "another version"), 200, 400, "UNIMPLEMENTED"],
    [new RpcError(-32602, "a bad param"), 200, 400, "INVALID_ARGUMENT"],
    [new RpcError(-32603, "it broke"), 200, 500, "INTERNAL"],
    [quotaExceeded({ message: "too many", retryAfterSeconds: 9 }), 429, 429, "RESOURCE_EXHAUSTED"],
  ];
  /** An error as it crosses the Durable Object boundary: a plain value. */
  const asValue = (error: RpcError) => ({ code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) });
  for (const [error, rpcStatus, restStatus, name] of TABLE) {
    it(`${error.code} ${error.data?.[0]?.reason ?? ""}: JSON-RPC ${rpcStatus}, HTTP+JSON ${restStatus} ${name}`, async () => {
      const edge = () => isolatedEdge({ resolveAgent: () => stubAgent({ getTask: () => ({ ok: false, error: asValue(error) }) }) });
      const request = { method: "GetTask" as const, params: { id: "t-1" }, edge };
      const rpc = await send("JSON-RPC", request);
      const rest = await send("HTTP+JSON", request);
      expect(rpc.status).toBe(rpcStatus);
      expect(rpc.body).toEqual({ jsonrpc: "2.0", id: 1, error: asValue(error) });
      expect(rest.status).toBe(restStatus);
      expect(rest.body).toEqual({ error: { code: restStatus, status: name, message: error.message, details: error.data ?? [] } });
      if (error.data) expect(rest.body.error.details[0]["@type"]).toBe(ERROR_INFO);
      expect(rest.headers.get("Retry-After")).toBe(rpc.headers.get("Retry-After"));
    });
  }
});
