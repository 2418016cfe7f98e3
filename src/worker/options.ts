import type { AgentManifest } from "../a2a/agent-manifest.js";
import type { GatekeeperJwks, GatekeeperJwksOptions } from "../a2a/gatekeeper-jwks.js";
import type { TaskAgentRpc } from "../host/task-agent-rpc.js";

/** The variables every deployment of the edge reads (CONTRACT.md §2). */
export interface EdgeEnv {
  A2A_SIGNING_KEY?: string;
  /** JSON array of public Ed25519 JWKs still published after a rotation. */
  A2A_PREVIOUS_PUBLIC_KEYS?: string;
  GATEKEEPER_ORIGINS?: string;
  /** The deployment's one public origin; when set, requests for any other host get 421. */
  PUBLIC_ORIGIN?: string;
}

/** The caller's Durable Object as the edge sees it. */
export type TaskAgentStub = TaskAgentRpc;

export interface TenantConfig<Env> {
  /** The tenant's own card, served by `GetExtendedAgentCard`. */
  manifest: AgentManifest;
  /** The namespace of the tenant's agent class; the edge picks one instance per verified caller. */
  agent: (env: Env) => DurableObjectNamespace;
}

export interface A2AWorkerOptions<Env> {
  /**
   * The deployment's stub card (`/.well-known/agent-card.json`). It names no
   * tenant; the edge appends the tenant list to its description for humans.
   * `skills` defaults to one skill describing how to reach the tenants.
   */
  deployment: Omit<AgentManifest, "skills"> & { skills?: AgentManifest["skills"] };
  tenants: Record<string, TenantConfig<Env>>;
  /** How gatekeeper key sets are cached, or the cache itself (to share it, or to inspect it in a spec). */
  jwks?: GatekeeperJwksOptions | GatekeeperJwks;
  /** The edge's clock in milliseconds (token `exp`, key set ages); injected by tests. */
  now?: () => number;
  /** Bodies above this are refused unread (HTTP 413). Default 2 MiB. */
  maxBodyBytes?: number;
}
