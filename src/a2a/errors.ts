import {
  A2A_ERROR_CODE,
  ContentTypeNotSupportedError,
  ERROR_INFO_TYPE,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InvalidAgentResponseError,
  PushNotificationNotSupportedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
  type A2AError,
} from "@a2a-js/sdk/errors";
import type { ConfigError } from "../errors/index.js";
import { PLATFORM_ERROR_DOMAIN } from "./wire.js";

export const ErrorCode = A2A_ERROR_CODE;

/** `google.rpc.ErrorInfo`, the entry of `error.data` that says which error this is (A2A 1.0 §9.5). */
export interface ErrorInfo {
  "@type": typeof ERROR_INFO_TYPE;
  /** UPPER_SNAKE_CASE, stable: what a client branches on. */
  reason: string;
  /** `a2a-protocol.org` for A2A's errors, {@link PLATFORM_ERROR_DOMAIN} for ours. */
  domain: string;
  metadata?: Record<string, string>;
}

type A2AErrorClass = new (options?: { metadata?: Record<string, string> }) => A2AError;

// The A2A errors (A2A 1.0 §9.5): the SDK's classes know each one's reason.
const A2A_ERRORS: ReadonlyMap<number, A2AErrorClass> = new Map<number, A2AErrorClass>([
  [ErrorCode.TASK_NOT_FOUND, TaskNotFoundError],
  [ErrorCode.TASK_NOT_CANCELABLE, TaskNotCancelableError],
  [ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED, PushNotificationNotSupportedError],
  [ErrorCode.UNSUPPORTED_OPERATION, UnsupportedOperationError],
  [ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, ContentTypeNotSupportedError],
  [ErrorCode.INVALID_AGENT_RESPONSE, InvalidAgentResponseError],
  [ErrorCode.EXTENDED_CARD_NOT_CONFIGURED, ExtendedAgentCardNotConfiguredError],
  [ErrorCode.EXTENSION_SUPPORT_REQUIRED, ExtensionSupportRequiredError],
  [ErrorCode.VERSION_NOT_SUPPORTED, VersionNotSupportedError],
]);

function a2aErrorData(code: number, metadata?: Record<string, string>): ErrorInfo[] | undefined {
  const Known = A2A_ERRORS.get(code);
  return Known && [new Known({ metadata }).toErrorInfo()];
}

/**
 * An A2A error's `data` always holds its ErrorInfo: kept when given (rebuilt
 * from a value that crossed the DO boundary, say), put first when missing.
 * Any other error's `data` is as given.
 */
function withErrorInfo(code: number, data: ErrorInfo[] | undefined): ErrorInfo[] | undefined {
  const own = a2aErrorData(code);
  if (!own || (data && errorInfoOf({ data }))) return data ?? own;
  return Array.isArray(data) ? [...own, ...data] : own;
}

/**
 * A JSON-RPC error the edge or a Durable Object answers with. It crosses the
 * DO RPC boundary as a plain `{ code, message, data }` value instead of a
 * thrown exception: workerd re-creates thrown errors as bare `Error`s on the
 * caller's side and drops custom fields, so the code would be lost.
 */
export class RpcError extends Error {
  override name = "RpcError";
  readonly data?: ErrorInfo[];

  constructor(
    readonly code: number,
    message: string,
    data?: ErrorInfo[],
  ) {
    super(message);
    // Every A2A error carries its ErrorInfo, however it was built.
    this.data = withErrorInfo(code, data);
  }
}

export interface RpcErrorValue {
  code: number;
  message: string;
  /** The errors' ErrorInfo (A2A 1.0 §9.5); JSON-RPC's own errors carry none. */
  data?: ErrorInfo[];
}

export function toRpcErrorValue(error: RpcError): RpcErrorValue {
  return error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data };
}

/** The ErrorInfo in an error's `data`, if it has one. */
export function errorInfoOf(error: { data?: unknown }): ErrorInfo | undefined {
  if (!Array.isArray(error.data)) return undefined;
  return error.data.find(
    (entry): entry is ErrorInfo => entry !== null && typeof entry === "object" && entry["@type"] === ERROR_INFO_TYPE && typeof entry.reason === "string",
  );
}

const a2aError = (code: number, message: string, metadata?: Record<string, string>) => new RpcError(code, message, a2aErrorData(code, metadata));

// ── A2A's errors ──────────────────────────────────────────────────────────

export const taskNotFound = (id: string) => a2aError(ErrorCode.TASK_NOT_FOUND, `Task not found: ${JSON.stringify(id)}`);

export const taskNotCancelable = (id: string, state: string) =>
  a2aError(ErrorCode.TASK_NOT_CANCELABLE, `Task ${JSON.stringify(id)} is ${state} and can no longer be canceled`, { taskState: state });

export const pushNotificationNotSupported = (message: string) => a2aError(ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED, message);

/** `metadata` travels in the ErrorInfo, e.g. `{ taskState }` for a message to a task that is busy. */
export const unsupportedOperation = (message: string, metadata?: Record<string, string>) => a2aError(ErrorCode.UNSUPPORTED_OPERATION, message, metadata);

export const contentTypeNotSupported = (message: string) => a2aError(ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, message);

export const invalidAgentResponse = (message: string) => a2aError(ErrorCode.INVALID_AGENT_RESPONSE, message);

export const extendedAgentCardNotConfigured = (message: string) => a2aError(ErrorCode.EXTENDED_CARD_NOT_CONFIGURED, message);

export const versionNotSupported = (message: string) => a2aError(ErrorCode.VERSION_NOT_SUPPORTED, message);

// ── JSON-RPC's own ────────────────────────────────────────────────────────

export const invalidParams = (message: string) => new RpcError(ErrorCode.INVALID_PARAMS, message);

export const invalidRequest = (message: string) => new RpcError(ErrorCode.INVALID_REQUEST, message);

// ── the platform's ────────────────────────────────────────────────────────

const platformError = (code: number, message: string, reason: string, metadata: Record<string, string>) =>
  new RpcError(code, message, [{ "@type": ERROR_INFO_TYPE, reason, domain: PLATFORM_ERROR_DOMAIN, metadata } satisfies ErrorInfo]);

export const QUOTA_EXCEEDED = "QUOTA_EXCEEDED";
export const AGENT_START_FAILED = "AGENT_START_FAILED";

/**
 * A budget, rate or capacity refusal: nothing was created, try again after
 * `retryAfterSeconds`. The edge answers it with HTTP 429 and `Retry-After`.
 */
export function quotaExceeded(options: { message: string; retryAfterSeconds: number; metadata?: Record<string, string> }): RpcError {
  const seconds = Math.max(1, Math.ceil(options.retryAfterSeconds));
  return platformError(-32000, options.message, QUOTA_EXCEEDED, { ...options.metadata, retryAfterSeconds: String(seconds) });
}

/** How long a quota refusal asks the caller to wait, in whole seconds; `undefined` for any other error. */
export function retryAfterOf(error: { data?: unknown }): number | undefined {
  const info = errorInfoOf(error);
  if (info?.reason !== QUOTA_EXCEEDED || info.domain !== PLATFORM_ERROR_DOMAIN) return undefined;
  const seconds = Number(info.metadata?.retryAfterSeconds);
  return Number.isInteger(seconds) && seconds > 0 ? seconds : 1;
}

/**
 * A tenant whose agent cannot start (a start-up check refused it). Names the
 * culprit and the check's code, never the configuration error's message:
 * that one is for the operator's logs and may quote what it refused.
 */
export function agentStartFailed(tenant: string | undefined, error: ConfigError): RpcError {
  const { kind, name } = error.culprit;
  const agent = tenant === undefined ? "This tenant's agent" : `The agent of tenant ${JSON.stringify(tenant)}`;
  return platformError(ErrorCode.INTERNAL_ERROR, `${agent} could not start: its ${kind} ${JSON.stringify(name)} is misconfigured`, AGENT_START_FAILED, {
    ...(tenant === undefined ? {} : { tenant }),
    culpritKind: kind,
    culpritName: name,
    code: error.code,
  });
}
