import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ErrorCode, RpcError } from "../a2a/errors.js";
import { TokenRefused } from "../a2a/verify-token.js";
import { ConfigError } from "../errors/index.js";
import type { EdgeHono } from "./context.js";
import { jsonRpcError, misconfigured, refusedToken, unexpected } from "./responses.js";

/**
 * The one place a refusal or failure becomes a response (hono's `onError`).
 * A client's mistake is never a 5xx: only a misconfigured deployment
 * (`ConfigError`) or an unforeseen failure outside a JSON-RPC call is.
 */
export function errorResponse<Env extends object>(error: Error, c: Context<EdgeHono<Env>>): Response {
  // As hono's bearer check sees it: an empty header is no token at all.
  if (error instanceof TokenRefused) return refusedToken(error, Boolean(c.req.header("Authorization")));
  const id = c.get("rpcId") ?? null;
  if (error instanceof HTTPException && error.cause instanceof RpcError) return jsonRpcError(id, error.cause, error.status);
  if (error instanceof RpcError) return jsonRpcError(id, error);
  if (error instanceof ConfigError) return misconfigured(error);
  if (error instanceof HTTPException) return error.getResponse();
  const call = c.get("call");
  console.error(`a2a edge: ${call ? `${call.method} failed` : "unexpected error"}`, error);
  // Inside a call the failure is the method's, answered as JSON-RPC's own.
  if (call) return jsonRpcError(id, new RpcError(ErrorCode.INTERNAL_ERROR, `Internal error while handling ${call.method}`));
  return unexpected();
}
