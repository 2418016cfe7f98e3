import type { ContentfulStatusCode } from "hono/utils/http-status";
import { rpcError, rpcResult, type JsonRpcId } from "../a2a/jsonrpc.js";
import { retryAfterOf, toRpcErrorValue, type RpcError } from "../a2a/errors.js";
import { restError } from "../a2a/rest-errors.js";
import type { TokenRefused } from "../a2a/verify-token.js";
import type { ConfigError } from "../errors/index.js";

const JSON_HEADERS = { "Content-Type": "application/json" };

const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });

/**
 * RFC 6750 §3: the challenge names the error, except for a request that
 * carried no token at all (§3.1: a bare challenge); the body says which check
 * refused it (docs/protocol.md "The edge, in order", step 2).
 */
export function refusedToken(refusal: TokenRefused, tokenPresent: boolean): Response {
  const description = refusal.message.replace(/["\\]/g, "'");
  const challenge = tokenPresent ? `Bearer error="invalid_token", error_description="${description}"` : 'Bearer realm="a2a"';
  return json({ error: "invalid_token", error_description: refusal.message, check: refusal.check }, 401, { "WWW-Authenticate": challenge });
}

/**
 * A JSON-RPC error. HTTP 200 unless the step that refused names a status; a
 * quota refusal is always 429 with `Retry-After` (docs/protocol.md "The edge,
 * in order").
 */
export function jsonRpcError(id: JsonRpcId, error: RpcError, status: ContentfulStatusCode = 200, headers: Record<string, string> = {}): Response {
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) return json(rpcError(id, toRpcErrorValue(error)), 429, { ...headers, "Retry-After": String(retryAfter) });
  return json(rpcError(id, toRpcErrorValue(error)), status, headers);
}

export function jsonRpcResult(id: JsonRpcId, result: unknown): Response {
  return json(rpcResult(id, result), 200);
}

/** An HTTP+JSON error (AIP-193), with the status A2A maps its code to unless an edge step named one. */
export function restErrorResponse(error: RpcError, stepStatus?: number, headers: Record<string, string> = {}): Response {
  const { status, body, retryAfter } = restError(error, stepStatus);
  return json(body, status, retryAfter === undefined ? headers : { ...headers, "Retry-After": String(retryAfter) });
}

/** An HTTP+JSON result: the JSON-RPC binding's `result`, and `{}` (google.protobuf.Empty) for none. */
export function restResult(result: unknown): Response {
  return json(result ?? {}, 200);
}

/** A deployment whose settings are wrong cannot serve anyone: the body names the culprit (never its value). */
export function misconfigured(error: ConfigError): Response {
  return json({ error: "server_misconfigured", error_description: error.message, code: error.code, culprit: error.culprit }, 500);
}

/** Something failed that no check foresaw: the server's fault, told without detail. */
export function unexpected(): Response {
  return json({ error: "server_error", error_description: "the server failed unexpectedly; see the Worker's logs" }, 500);
}

/** RFC 9110 §15.5.20: this deployment answers for one origin only, so nothing it signs names another. */
export function misdirected(publicOrigin: string): Response {
  return json({ error: "misdirected_request", error_description: `this deployment answers at ${publicOrigin} only` }, 421);
}

export function notFound(method: string, path: string): Response {
  return json({ error: "not_found", error_description: `No route for ${method} ${path}` }, 404);
}

export function methodNotAllowed(): Response {
  return json({ error: "method_not_allowed", error_description: "POST JSON-RPC 2.0 here" }, 405, { Allow: "POST" });
}
