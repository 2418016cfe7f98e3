import { ErrorCode, RpcError, type RpcErrorValue } from "./errors.js";

export type JsonRpcId = string | number | null;

export interface JsonRpcCall {
  id: JsonRpcId;
  method: string;
  params: Record<string, unknown>;
}

export type JsonRpcResponse = { jsonrpc: "2.0"; id: JsonRpcId; result: unknown } | { jsonrpc: "2.0"; id: JsonRpcId; error: RpcErrorValue };

export const rpcResult = (id: JsonRpcId, result: unknown): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id,
  result,
});

export const rpcError = (id: JsonRpcId, error: RpcErrorValue): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id,
  error,
});

export type ParsedCall = { ok: true; call: JsonRpcCall } | { ok: false; id: JsonRpcId; error: RpcError };

/**
 * Parses the raw body into one JSON-RPC 2.0 call: -32700 for unparseable JSON,
 * -32600 for JSON that is not a single request object. The request's `id` is
 * kept when it is readable so the caller can correlate the error; JSON-RPC 2.0
 * §5 says `null` otherwise.
 */
export function parseJsonRpc(body: string): ParsedCall {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return envelopeError(null, ErrorCode.PARSE_ERROR, "Parse error: the body is not valid JSON");
  }
  if (Array.isArray(value)) {
    return envelopeError(null, ErrorCode.INVALID_REQUEST, "Invalid request: batch calls are not supported, send one call per request");
  }
  if (value === null || typeof value !== "object") {
    return envelopeError(null, ErrorCode.INVALID_REQUEST, "Invalid request: the body must be a JSON-RPC 2.0 request object");
  }
  const call = value as Record<string, unknown>;
  const id = readableId(call.id);
  const invalid = (why: string) => envelopeError(id ?? null, ErrorCode.INVALID_REQUEST, `Invalid request: ${why}`);
  if (call.jsonrpc !== "2.0") return invalid('"jsonrpc" must be "2.0"');
  if (!("id" in call)) return invalid('notifications are not supported, "id" is required');
  if (id === undefined) return invalid('"id" must be a string, a number or null');
  if (typeof call.method !== "string" || call.method === "") return invalid('"method" must be a non-empty string');
  const params = call.params ?? {};
  if (params === null || typeof params !== "object" || Array.isArray(params)) {
    return invalid('"params" must be an object');
  }
  return { ok: true, call: { id, method: call.method, params: params as Record<string, unknown> } };
}

const envelopeError = (id: JsonRpcId, code: number, message: string): ParsedCall => ({
  ok: false,
  id,
  error: new RpcError(code, message),
});

function readableId(id: unknown): JsonRpcId | undefined {
  if (id === null || typeof id === "string") return id;
  if (typeof id === "number" && Number.isFinite(id)) return id;
  return undefined;
}
