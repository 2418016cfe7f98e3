import type { ModelEnv } from "../agent/model-config.js";
import type { HitlWords } from "../agent/policy.js";
import type { TurnParams } from "../boundary/index.js";
import type { AnalyticsDataset } from "../telemetry/index.js";

// What the caller's object (TaskAgent) and the agent loop on top of it
// (DynamicAgent) hand each other: the rounds go down, the words and bounds
// the lifecycle needs come up.

/** The bindings and variables the caller's object reads. */
export interface AgentEnv extends ModelEnv {
  /** Where accepted turns run; the object restarts an instance that errored or vanished. */
  TURN_WORKFLOW?: Workflow<TurnParams>;
  /** The card key: events hash callers under a key derived from it. */
  A2A_SIGNING_KEY?: string;
  /** Optional Analytics Engine dataset for the numeric events (docs/telemetry.md). */
  A2A_ANALYTICS?: AnalyticsDataset;
}

/** The words the lifecycle itself says (from the agent's policy). */
export interface LifecycleWords {
  abandoned: string;
  unfinished: string;
  canceled: string;
  hitl: HitlWords;
}

/** The bounds the lifecycle keeps (from the agent's config). */
export interface LifecycleLimits {
  maxInFlightTurns: number;
  maxPendingQuestions: number;
  maxPendingDeliveries: number;
  maxOpenStreams: number;
  retention: { finishedTaskDays: number; messageIdDays: number };
  /** How long a request to a human waits before it expires. */
  hitlExpiresAfterMs: number;
}
