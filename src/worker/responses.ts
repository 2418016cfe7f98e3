import type { TokenRefused } from "../a2a/verify-token.js";
import { rpcError, rpcResult, type JsonRpcId } from "../a2a/jsonrpc.js";
import type { RpcError } from "../a2a/errors.js";

const JSON_HEADERS = { "Content-Type": "application/json" };

/** RFC 6750 §3: the challenge names the error; the body says which check refused the token. */
export function refusedToken(refusal: TokenRefused): Response {
  const description = refusal.message.replace(/["\\]/g, "'");
  return new Response(
    JSON.stringify({ error: "invalid_token", error_description: refusal.message, check: refusal.check }),
    {
      status: 401,
      headers: {
        ...JSON_HEADERS,
        "WWW-Authenticate": `Bearer error="invalid_token", error_description="${description}"`,
      },
    },
  );
}

export function missingToken(): Response {
  return new Response(
    JSON.stringify({ error: "invalid_request", error_description: "a gatekeeper-issued bearer token is required" }),
    { status: 401, headers: { ...JSON_HEADERS, "WWW-Authenticate": 'Bearer realm="a2a"' } },
  );
}

export function jsonRpcError(id: JsonRpcId, error: RpcError, status = 200): Response {
  return new Response(JSON.stringify(rpcError(id, { code: error.code, message: error.message })), {
    status,
    headers: JSON_HEADERS,
  });
}

export function jsonRpcResult(id: JsonRpcId, result: unknown): Response {
  return new Response(JSON.stringify(rpcResult(id, result)), { status: 200, headers: JSON_HEADERS });
}

/** A deployment whose secrets are wrong cannot serve anyone; the message says which one. */
export function misconfigured(message: string): Response {
  return new Response(JSON.stringify({ error: "server_misconfigured", error_description: message }), {
    status: 500,
    headers: JSON_HEADERS,
  });
}

/** RFC 9110 §15.5.20: this deployment answers for one origin only, so nothing it signs names another. */
export function misdirected(publicOrigin: string): Response {
  return new Response(
    JSON.stringify({ error: "misdirected_request", error_description: `this deployment answers at ${publicOrigin} only` }),
    { status: 421, headers: JSON_HEADERS },
  );
}
