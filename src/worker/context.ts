import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { RpcError } from "../a2a/errors.js";
import type { JsonRpcId } from "../a2a/jsonrpc.js";
import type { VerifiedCaller } from "../a2a/verify-token.js";
import type { Telemetry } from "../telemetry/index.js";

/** The events one request emits, in order, under one occurrence id. */
export interface EdgeEvents {
  telemetry: Telemetry;
  /** Refusals are never replayed: a random id per request makes each one its own occurrence. */
  requestId: string;
}

/** The one call a request makes, in either binding. */
interface EdgeCall {
  /** The JSON-RPC request's id (errors and stream events echo it); `null` in HTTP+JSON. */
  id: JsonRpcId;
  method: string;
  /** Every tenant the request names, the one it is addressed to first: step 7 lets it through only when each is the token's. */
  tenants: readonly unknown[];
  /** The method's params, put together at step 9 (where a conflict among their sources is -32602). */
  params: () => Record<string, unknown>;
}

/**
 * What differs between JSON-RPC and HTTP+JSON (docs/protocol.md "Wire"):
 * how a request is read and how it is answered. Every step of the edge is
 * the same for both and asks the request's binding only this.
 */
export interface Binding {
  /** Steps 3, 4 and 6 check and read a body only when the request carries one. */
  hasBody(request: Request): boolean;
  /** Step 6: the call in the body (`undefined`: none) and the request, or the refusal (HTTP 400). */
  readCall(c: Context, body: string | undefined): { ok: true; call: EdgeCall } | { ok: false; error: RpcError };
  /** A method's result. */
  result(call: EdgeCall, result: unknown): Response;
  /** The `data:` of one stream event, a StreamResponse. */
  eventData(call: EdgeCall, eventJson: string): string;
  /** An error: `status` is what an edge step named (absent for a method's own error). */
  error(c: Context, error: RpcError, status?: ContentfulStatusCode, headers?: Record<string, string>): Response;
}

/** What each step of the edge leaves on the context for the steps after it. */
interface EdgeVariables {
  /** Step 1: the origin everything signed names (PUBLIC_ORIGIN, or the request's own). */
  origin: string;
  /** Which binding the request speaks (JSON-RPC from the start; HTTP+JSON once its route matched). */
  binding: Binding;
  /** Step 2: who is calling, as the gatekeeper's verified token says. */
  caller: VerifiedCaller;
  /** Step 6: the JSON-RPC request's id, as soon as it can be read (errors echo it). */
  rpcId: JsonRpcId;
  /** Step 6: the one call of the request. */
  call: EdgeCall;
  /** Once asked for: the verified caller's hash (the events' `caller`, the rate limit's key). */
  callerHash: Promise<string | undefined>;
  /** Once the request emits an event: where its events go. */
  events: EdgeEvents;
}

export type EdgeHono<Env extends object> = { Bindings: Env; Variables: EdgeVariables };
