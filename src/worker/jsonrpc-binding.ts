import { createMiddleware } from "hono/factory";
import { parseJsonRpc } from "../a2a/jsonrpc.js";
import type { Binding, EdgeHono } from "./context.js";
import type { EdgeEnv } from "./options.js";
import { jsonRpcError, jsonRpcResult } from "./responses.js";

/** JSON-RPC 2.0 on `/a2a` (docs/protocol.md "Wire"): one request object per POST, errors with HTTP 200 unless a step names another status. */
const jsonRpcBinding: Binding = {
  hasBody: () => true,
  readCall(c, body) {
    const parsed = parseJsonRpc(body ?? "");
    c.set("rpcId", parsed.ok ? parsed.call.id : parsed.id);
    if (!parsed.ok) return parsed;
    const { id, method, params } = parsed.call;
    return { ok: true, call: { id, method, tenants: [params.tenant], params: () => params } };
  },
  result: (call, result) => jsonRpcResult(call.id, result),
  eventData: (call, eventJson) => `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":${eventJson}}`,
  error: (c, error, status, headers) => jsonRpcError(c.get("rpcId") ?? null, error, status, headers),
};

/** Marks a request to `/a2a` as JSON-RPC, before any step runs. */
export const jsonRpcStep = <Env extends EdgeEnv>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    c.set("binding", jsonRpcBinding);
    await next();
  });
