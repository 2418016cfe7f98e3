import type { AgentConfigInput } from "@dynamicagents/core";
import type { Env } from "./env.js";

/**
 * An agent's log lines, for its `agentConfig()`: `telemetry: logLinesFromEnv(this.env)`. Deployed, a turn
 * writes two (when accepted, and one wide line when it ends); `npm start` sets EVENT_LINES=1, and each event
 * then gets its own line, which the dev console's timelines and waterfall are drawn from.
 */
export const logLinesFromEnv = (env: Pick<Env, "EVENT_LINES">): AgentConfigInput["telemetry"] => ({ eventLines: env.EVENT_LINES === "1" });
