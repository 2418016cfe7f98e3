import type { JsonRpcCall, JsonRpcId } from "../a2a/jsonrpc.js";
import type { VerifiedCaller } from "../a2a/verify-token.js";
import type { Telemetry } from "../telemetry/index.js";

/** The events one request emits, in order, under one occurrence id. */
export interface EdgeEvents {
  telemetry: Telemetry;
  /** Refusals are never replayed: a random id per request makes each one its own occurrence. */
  requestId: string;
}

/** What each step of the edge leaves on the context for the steps after it. */
interface EdgeVariables {
  /** Step 1: the origin everything signed names (PUBLIC_ORIGIN, or the request's own). */
  origin: string;
  /** Whether the request's `A2A-Extensions` activates progress (docs/protocol.md "Progress"). */
  progress: boolean;
  /** Step 2: who is calling, as the gatekeeper's verified token says. */
  caller: VerifiedCaller;
  /** Step 6: the request's id, as soon as it can be read (errors echo it). */
  rpcId: JsonRpcId;
  /** Step 6: the one JSON-RPC call of the body. */
  call: JsonRpcCall;
  /** Once asked for: the verified caller's hash (the events' `caller`, the rate limit's key). */
  callerHash: Promise<string | undefined>;
  /** Once the request emits an event: where its events go. */
  events: EdgeEvents;
}

export type EdgeHono<Env extends object> = { Bindings: Env; Variables: EdgeVariables };
