// Wire-level building blocks: card signing and canonical form, the JWKS key,
// gatekeeper-token verification, errors and limits.
export { buildCardWire, validateManifest, type AgentManifest, type CardContext } from "./agent-manifest.js";
export { signCallbackJwt } from "./callback-jwt.js";
export { signCallerToken, type CallerTokenOptions } from "./caller-token.js";
export { canonicalCardPayload } from "./card-canonical.js";
export { signCard, type CardSignature } from "./card-signing.js";
export type { GatekeeperIdentity } from "./claims.js";
export {
  AGENT_START_FAILED,
  ErrorCode,
  QUOTA_EXCEEDED,
  RpcError,
  agentStartFailed,
  contentTypeNotSupported,
  errorInfoOf,
  extendedAgentCardNotConfigured,
  invalidAgentResponse,
  invalidParams,
  invalidRequest,
  pushNotificationNotSupported,
  quotaExceeded,
  retryAfterOf,
  taskNotCancelable,
  taskNotFound,
  unsupportedOperation,
  versionNotSupported,
  type ErrorInfo,
  type RpcErrorValue,
} from "./errors.js";
export { GatekeeperJwks, GatekeeperJwksUnavailable, type GatekeeperJwksOptions } from "./gatekeeper-jwks.js";
export { isLoopbackHost, loadGatekeeperOrigins } from "./gatekeeper-origins.js";
export { jcs } from "./jcs.js";
export { parseJsonRpc, type JsonRpcCall, type JsonRpcId, type ParsedCall } from "./jsonrpc.js";
export { assertContentWithinLimit } from "./limits.js";
export { loadPreviousPublicKeys } from "./previous-keys.js";
export {
  MAX_AUTH_CREDENTIALS_BYTES,
  MAX_AUTH_SCHEME_BYTES,
  MAX_PUSH_CONFIG_ID_CHARS,
  MAX_PUSH_CONFIGS_PER_TASK,
  MAX_PUSH_TOKEN_BYTES,
  MAX_PUSH_URL_CHARS,
  pushTarget,
  validateCallerPushConfig,
  validatePushConfig,
} from "./push-config.js";
export { loadSigningKey, type PublicSigningJwk, type SigningKey } from "./signing-key.js";
export { isTerminalName, parseStateName } from "./task-state.js";
export { loadTestClock, testClockOf, type TestClock, type TestClockEnv } from "./test-clock.js";
export {
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  TRACE_KEY,
  childTraceparent,
  freshTraceparent,
  newTrace,
  traceOfRequest,
  turnTrace,
  type TraceContext,
  type TurnTrace,
} from "./trace-context.js";
export { TokenRefused, verifyGatekeeperToken, type TokenCheck, type TokenRefusedCode, type VerifiedCaller, type VerifyOptions } from "./verify-token.js";
export {
  A2A_EXTENSIONS_HEADER,
  A2A_JSON,
  A2A_PATH,
  A2A_REST_PATH,
  A2A_VERSION,
  A2A_VERSION_HEADER,
  CALLBACK_TTL_SECONDS,
  CARD_PATH,
  DEAD_LETTERS_KEY,
  ERASURE_EXTENSION,
  USAGE_KEY,
  HITL_REQUEST_TYPE,
  HITL_RESPONSE_TYPE,
  HITL_TIMEOUT_TYPE,
  IDENTITY_CLAIM,
  JWKS_PATH,
  MAX_CONTENT_BYTES,
  MAX_TOKEN_LIFETIME_SECONDS,
  NOTIFICATION_TOKEN_HEADER,
  EVENT_SEQ_HEADER,
  PLATFORM_ERROR_DOMAIN,
  ROUND_RESULT_PATTERN,
  TASK_CLAIM,
  TENANT_CLAIM,
  TERMINAL_STATE_NAMES,
  endpointOf,
  isJsonMediaType,
  jwksUrlOf,
  restEndpointOf,
  roundResultHead,
} from "./wire.js";
