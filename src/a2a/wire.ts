// The wire constants of this platform, in one place. This module imports
// nothing, so the Node tooling (scripts/, bench/, test/node/) loads it
// directly (`…/src/a2a/wire.ts`, Node strips the types) and shares every
// name and number with the Worker. docs/protocol.md says what each one means.

/** Where this deployment answers (docs/protocol.md "Wire"): JSON-RPC, HTTP+JSON (under `/{tenant}`), the stub card, the JWKS. */
export const A2A_PATH = "/a2a";
export const A2A_REST_PATH = "/a2a/rest";
export const CARD_PATH = "/.well-known/agent-card.json";
export const JWKS_PATH = "/.well-known/jwks.json";

/** The endpoint a token for the deployment at `origin` is minted for: `aud` compares to exactly this. */
export const endpointOf = (origin: string): string => `${origin}${A2A_PATH}`;

/** The HTTP+JSON interface URL of the deployment at `origin`; its tokens' `aud` is still {@link endpointOf}. */
export const restEndpointOf = (origin: string): string => `${origin}${A2A_REST_PATH}`;

/** The key set of a gatekeeper (or of this deployment) at `origin`: the only `jku` accepted for it. */
export const jwksUrlOf = (origin: string): string => `${origin}${JWKS_PATH}`;

/** The protocol version every request names in `A2A-Version`. */
export const A2A_VERSION_HEADER = "A2A-Version";
export const A2A_VERSION = "1.0";

/** The header naming the extensions a request activates, and a response echoes (A2A §3.2.6). */
export const A2A_EXTENSIONS_HEADER = "A2A-Extensions";
/** Erasure (docs/retention.md "Erasure"): every card declares it, not required; its methods (methods.ts) need no header. */
export const ERASURE_EXTENSION = "https://dynamicagents.dev/ext/erasure/v1";

/** The media type of a push's body (a StreamResponse). */
export const A2A_JSON = "application/a2a+json";

/** The header a push carries the push config's `token` in. */
export const NOTIFICATION_TOKEN_HEADER = "x-a2a-notification-token";
/** Each push's event number (per task): a gatekeeper de-duplicates on task id + seq. */
export const EVENT_SEQ_HEADER = "x-dynamicagents-event-seq";

/** Private claim names the gatekeeper mints (docs/protocol.md "The gatekeeper token"). */
export const TENANT_CLAIM = "https://dynamicagents.dev/tenant";
export const IDENTITY_CLAIM = "https://dynamicagents.dev/identity";
/** The callback JWT's claim naming the task a push is about (docs/protocol.md "Events, streams and pushes"). */
export const TASK_CLAIM = "https://dynamicagents.dev/task";

/** Where a task's metadata lists the deliveries given up (docs/protocol.md "Events, streams and pushes"). */
export const DEAD_LETTERS_KEY = "https://dynamicagents.dev/deadLetters";
/** A finished task's metadata key for what its turn's model calls cost: `{inputTokens, outputTokens, modelCalls}` (docs/telemetry.md). */
export const USAGE_KEY = "https://dynamicagents.dev/usage";

/** Gatekeepers mint a token per call; one whose `exp` is further ahead than this is refused. */
export const MAX_TOKEN_LIFETIME_SECONDS = 3600;

/** A callback token (the bearer of a push) lives at most this long. */
export const CALLBACK_TTL_SECONDS = 300;

/** docs/protocol.md "SendMessage" → Content limit: what a message's text, data and inline text files may total, in bytes. */
export const MAX_CONTENT_BYTES = 262_144;

/** Wire names of the states after which a task never changes again (A2A §4.1.3). */
export const TERMINAL_STATE_NAMES: readonly string[] = ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"];

/** Wire names of the states in which a task waits for its caller: a stream closes at one, as at a terminal one. */
export const INTERRUPTED_STATE_NAMES: readonly string[] = ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"];

/** The `data` part types of human in the loop (docs/protocol.md "Human in the loop"). */
export const HITL_REQUEST_TYPE = "https://dynamicagents.dev/hitl/request";
export const HITL_RESPONSE_TYPE = "https://dynamicagents.dev/hitl/response";
export const HITL_TIMEOUT_TYPE = "https://dynamicagents.dev/hitl/timeout";

/** The domain of the platform's own ErrorInfo reasons (docs/protocol.md "The edge, in order"). */
export const PLATFORM_ERROR_DOMAIN = "dynamicagents.dev";

/**
 * How the round loop shows the model one finished subtask: a head line
 * `[round N] <type> <params JSON> → <status>`, then the result. The offline
 * stand-in model and the specs' fake model find delegation results by
 * {@link ROUND_RESULT_PATTERN}.
 */
export const roundResultHead = (round: number, type: string, paramsJson: string, status: string): string =>
  `[round ${round}] ${type} ${paramsJson} → ${status}`;
export const ROUND_RESULT_PATTERN = /^\[round (\d+)\] /m;

/**
 * Whether a `Content-Type` names JSON: `application/json` or any
 * `application/*+json` (RFC 6839 §3.1), parameters and case ignored.
 */
export function isJsonMediaType(contentType: string | null | undefined): boolean {
  const essence = (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase();
  return essence === "application/json" || /^application\/[!#$&^_.+\-a-z0-9]+\+json$/.test(essence);
}
