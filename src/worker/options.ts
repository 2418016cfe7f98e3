import type { AgentManifest } from "../a2a/agent-manifest.js";
import type { GatekeeperJwks, GatekeeperJwksOptions } from "../a2a/gatekeeper-jwks.js";
import type { TestClockEnv } from "../a2a/test-clock.js";
import type { VerifiedCaller } from "../a2a/verify-token.js";
import type { AgentNamespace, CallerObject, TurnParams, TurnToStart } from "../boundary/index.js";

/** The variables and bindings the edge reads (docs/protocol.md "Operator surface"; test clocks: docs/gatekeeper.md). */
export interface EdgeEnv extends TestClockEnv {
  /** Secret: the private Ed25519 JWK (with `kid`) that signs cards and callbacks. */
  A2A_SIGNING_KEY?: string;
  /** JSON array of public Ed25519 JWKs still published after a rotation. */
  A2A_PREVIOUS_PUBLIC_KEYS?: string;
  /** JSON array of the gatekeeper origins whose tokens are accepted. */
  GATEKEEPER_ORIGINS?: string;
  /** The deployment's one public origin; when set, requests for any other host get 421. */
  PUBLIC_ORIGIN?: string;
  /** Where accepted turns start, unless `startTurn` says otherwise. */
  TURN_WORKFLOW?: Workflow<TurnParams>;
  /** The Worker's version metadata: its upload time is the cards' and the JWKS's `Last-Modified`. */
  CF_VERSION_METADATA?: WorkerVersionMetadata;
  /** Optional Analytics Engine dataset: the edge's events as data points, beside their log lines (docs/telemetry.md). */
  A2A_ANALYTICS?: AnalyticsEngineDataset;
  /** Optional Workers rate-limiting binding: caps each verified caller's requests at step 7, unless `rateLimiter` says otherwise. */
  A2A_RATE_LIMITER?: RateLimit;
  /** Never read by the edge: a secret its events are scrubbed of, like `A2A_SIGNING_KEY`. */
  OPENAI_API_KEY?: string;
}

export interface TenantConfig<Env> {
  /** The tenant's own card, served by `GetExtendedAgentCard`. */
  manifest: AgentManifest;
  /** The namespace of the tenant's agent class; the edge picks one instance per verified caller. */
  agent: (env: Env) => AgentNamespace;
  /**
   * Whether this deployment serves the tenant under `env`, asked on every
   * request; absent means always. A tenant it says no to is unknown at the
   * edge's known-tenant step (-32602, HTTP 404) and is not named among the
   * tenants served. The reference `conformance` tenant is served only with
   * `CONFORMANCE=1` (docs/conformance.md).
   */
  enabled?: (env: Env) => boolean;
}

export interface A2AWorkerOptions<Env> {
  /**
   * The deployment's stub card (`/.well-known/agent-card.json`), served as
   * written: it names no tenant, and core adds no words of its own, so its
   * description is where to tell people which tenants answer here and how.
   */
  deployment: AgentManifest;
  tenants: Record<string, TenantConfig<Env>>;
  /**
   * How the edge addresses a verified caller's object for `tenant` (a known
   * one). Default: the tenant's namespace, one object per (gatekeeper,
   * tenant, identity key) by `callerObjectName`. A `ConfigError` thrown here
   * answers the call as the tenant's agent failing to start.
   */
  resolveAgent?: (caller: VerifiedCaller, tenant: string, env: Env) => CallerObject;
  /**
   * How an accepted turn starts, after the reply is on its way (never delaying
   * it). Default: `env.TURN_WORKFLOW.create({ id, params })`, an instance that
   * already exists counting as started. A failure is logged; the caller's
   * object restarts a turn whose instance never appeared.
   */
  startTurn?: (turn: TurnToStart, env: Env) => Promise<void>;
  /** How gatekeeper key sets are cached, or the cache itself (to share it, or to inspect it in a spec). */
  jwks?: GatekeeperJwksOptions | GatekeeperJwks;
  /** The edge's clock in milliseconds (token `exp`, key set ages); injected by tests. */
  now?: () => number;
  /** Bodies above this are refused unread (HTTP 413). Default 2 MiB. */
  maxBodyBytes?: number;
  /**
   * The per-caller rate limit of step 7, after the tenant claim matched and
   * before any Durable Object is addressed: a Workers rate-limiting binding,
   * asked with the caller's hash as its key (never the identity). A caller
   * over it gets HTTP 429 `QUOTA_EXCEEDED`. Default: `env.A2A_RATE_LIMITER`
   * when bound; `undefined` limits no one.
   */
  rateLimiter?: (env: Env) => RateLimit | undefined;
  /** The `Retry-After` of a rate-limited call, in seconds. Default 60: the longest period a rate-limiting binding takes. */
  rateLimitRetryAfterSeconds?: number;
  /**
   * How often an open stream writes an SSE comment, in milliseconds (at
   * most 15,000). A failed write is how the edge learns a client is gone and
   * frees its place under `limits.maxOpenStreams`; each beat also checks the
   * stream's two ends (the token's `exp`, `streamMaxLifetimeMs`). Default
   * 10,000 (docs/protocol.md "Events, streams and pushes").
   */
  streamHeartbeatMs?: number;
  /**
   * The longest a stream stays open, in milliseconds, ended at the first
   * beat past it; its client resumes with a fresh token and `Last-Event-ID`.
   * Default 10 minutes: the gatekeeper key sets' longest cache age, so a
   * revoked key's open streams end as soon as its new calls are refused.
   */
  streamMaxLifetimeMs?: number;
}
