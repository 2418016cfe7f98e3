import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { AGENT_START_FAILED, ErrorCode, RpcError, errorInfoOf } from "../a2a/errors.js";
import { TokenRefused } from "../a2a/verify-token.js";
import { PLATFORM_ERROR_DOMAIN } from "../a2a/wire.js";
import { ConfigError } from "../errors/index.js";
import { isMethod } from "../a2a/methods.js";
import type { EdgeHono } from "./context.js";
import { emitAtEdge } from "./edge-events.js";
import type { EdgeEnv } from "./options.js";
import { EdgeRefusal } from "./request-steps.js";
import { misconfigured, refusedToken, unexpected } from "./responses.js";

/**
 * The one place a refusal or failure becomes a response (hono's `onError`).
 * A client's mistake is never a 5xx: only a misconfigured deployment
 * (`ConfigError`) or an unforeseen failure is. An error of a call is
 * answered in its binding's shape. A refusal by one of the edge's checks is
 * also an `edge.refused` event.
 */
export function errorResponse<Env extends EdgeEnv>(error: Error, c: Context<EdgeHono<Env>>): Response {
  const response = respond(error, c);
  const refused = refusalOf(error, c);
  if (refused) {
    const method = c.get("call")?.method;
    // Only a method's own name: whatever else a body calls its method stays out of the log.
    const named = method !== undefined && isMethod(method) ? { method } : {};
    emitAtEdge(c, "edge.refused", { check: refused.check, status: response.status, code: refused.code, ...named });
  }
  return response;
}

function respond<Env extends EdgeEnv>(error: Error, c: Context<EdgeHono<Env>>): Response {
  // As hono's bearer check sees it: an empty header is no token at all.
  if (error instanceof TokenRefused) return refusedToken(error, Boolean(c.req.header("Authorization")));
  // Set before any step that raises an A2A error (the JSON-RPC route's first, HTTP+JSON's route step).
  const binding = c.get("binding");
  if (error instanceof EdgeRefusal) return binding.error(c, error.error, error.status, error.headers);
  if (error instanceof HTTPException && error.cause instanceof RpcError) return binding.error(c, error.cause, error.status);
  if (error instanceof RpcError) return binding.error(c, error);
  if (error instanceof ConfigError) return misconfigured(error);
  if (error instanceof HTTPException) return error.getResponse();
  const call = c.get("call");
  console.error(`a2a edge: ${call ? `${call.method} failed` : "unexpected error"}`, error);
  // Inside a call the failure is the method's, answered as its binding's internal error.
  if (call) return binding.error(c, new RpcError(ErrorCode.INTERNAL_ERROR, `Internal error while handling ${call.method}`));
  return unexpected();
}

/**
 * Which check refused the request, and the JSON-RPC code it answered (0 for
 * a token's 401, which is no JSON-RPC answer); `undefined` for anything that
 * is not a check's refusal (a method's own error, a misconfiguration).
 */
function refusalOf<Env extends EdgeEnv>(error: Error, c: Context<EdgeHono<Env>>): { check: string; code: number } | undefined {
  if (error instanceof TokenRefused) {
    // Step 7 refuses as a token does, once the token itself verified.
    return { check: c.get("caller") ? "tenant-claim" : `token.${error.check}`, code: 0 };
  }
  if (error instanceof EdgeRefusal) return { check: error.check, code: error.error.code };
  if (error instanceof RpcError) {
    const info = errorInfoOf(error);
    if (info?.reason === AGENT_START_FAILED && info.domain === PLATFORM_ERROR_DOMAIN) return { check: "agent-start", code: error.code };
  }
  return undefined;
}
