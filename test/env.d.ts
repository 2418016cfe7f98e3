import type { AgentNamespace, TurnParams } from "@dynamicagents/core/boundary";
import type { Env as ReferenceEnv } from "../reference/env.js";

declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("./support/worker.js");
    }
    interface Env extends ReferenceEnv {
      // The specs' own agents (test/support/agents.ts); optional so that the
      // reference's Env still satisfies the global one the agents SDK asks for.
      MARKER_AGENT?: AgentNamespace;
      MARKER_RESEARCHER?: AgentNamespace;
      MARKER_UNLISTED?: AgentNamespace;
      MARKER_BROKEN?: AgentNamespace;
      MARKER_OBSERVED?: AgentNamespace;
      MARKER_MCP?: AgentNamespace;
      /** The observed agent with the log's default: two lines a turn. */
      MARKER_TWO_LINES?: AgentNamespace;
      MCP_TOKEN?: string;
      /** The observed agent's plugin secret: a canary no event or log line may carry. */
      OBSERVED_SECRET?: string;
      MARKER_WORKFLOW?: Workflow<TurnParams>;
      /** The broken agent's secret, a canary (vitest.config.ts). */
      SPEC_BROKEN_SECRET?: string;
      /** A real rate-limiting binding (3 a minute) for edges the specs build. */
      TEST_RATE_LIMITER?: RateLimit;
      /** Closes every connection before answering (vitest.config.ts): a dropped connection, as the runtime reports it. */
      CONNECTION_DROPPER?: Fetcher;
    }
  }
}
