import { ErrorCode, retryAfterOf, type RpcError } from "./errors.js";

// An error as the HTTP+JSON binding answers it (docs/protocol.md "Errors"):
// AIP-193's `{"error": {code, status, message, details}}`, `code` the HTTP
// status, `status` the google.rpc.Code name, `details` the same ErrorInfo the
// JSON-RPC binding puts in `error.data`.

type Mapping = readonly [httpStatus: number, rpcCode: string];

/** A2A 1.0 §5.4 for A2A's errors; JSON-RPC's own by what they mean. */
const BY_CODE: ReadonlyMap<number, Mapping> = new Map<number, Mapping>([
  [ErrorCode.TASK_NOT_FOUND, [404, "NOT_FOUND"]],
  [ErrorCode.TASK_NOT_CANCELABLE, [409, "FAILED_PRECONDITION"]],
  [ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED, [400, "UNIMPLEMENTED"]],
  [ErrorCode.UNSUPPORTED_OPERATION, [400, "UNIMPLEMENTED"]],
  [ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, [415, "INVALID_ARGUMENT"]],
  [ErrorCode.INVALID_AGENT_RESPONSE, [502, "INTERNAL"]],
  [ErrorCode.EXTENDED_CARD_NOT_CONFIGURED, [400, "FAILED_PRECONDITION"]],
  [ErrorCode.EXTENSION_SUPPORT_REQUIRED, [400, "FAILED_PRECONDITION"]],
  [ErrorCode.VERSION_NOT_SUPPORTED, [400, "UNIMPLEMENTED"]],
  [ErrorCode.PARSE_ERROR, [400, "INVALID_ARGUMENT"]],
  [ErrorCode.INVALID_REQUEST, [400, "INVALID_ARGUMENT"]],
  [ErrorCode.METHOD_NOT_FOUND, [404, "NOT_FOUND"]],
  [ErrorCode.INVALID_PARAMS, [400, "INVALID_ARGUMENT"]],
  [ErrorCode.INTERNAL_ERROR, [500, "INTERNAL"]],
]);

/** A status an edge step names for itself, where it means something else than the error's code (an unknown tenant, a wrong verb). */
const BY_STEP_STATUS: ReadonlyMap<number, string> = new Map([
  [404, "NOT_FOUND"],
  [405, "UNIMPLEMENTED"],
]);

export interface RestErrorBody {
  error: { code: number; status: string; message: string; details: unknown[] };
}

/**
 * The HTTP status and body of `error`: a quota refusal is 429
 * `RESOURCE_EXHAUSTED` (with its `Retry-After`); otherwise the status an
 * edge step named, else the one A2A maps the code to.
 */
export function restError(error: RpcError, stepStatus?: number): { status: number; body: RestErrorBody; retryAfter?: number } {
  const retryAfter = retryAfterOf(error);
  const [byCode, byCodeName] = BY_CODE.get(error.code) ?? [500, "UNKNOWN"];
  let status = byCode;
  let name = byCodeName;
  if (retryAfter !== undefined) [status, name] = [429, "RESOURCE_EXHAUSTED"];
  else if (stepStatus !== undefined && stepStatus !== 200) [status, name] = [stepStatus, BY_STEP_STATUS.get(stepStatus) ?? byCodeName];
  const body = { error: { code: status, status: name, message: error.message, details: error.data ?? [] } };
  return retryAfter === undefined ? { status, body } : { status, body, retryAfter };
}
