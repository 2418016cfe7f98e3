import type { ModelEnv } from "../agent/model-config.js";
import type { HitlWords } from "../agent/policy.js";
import type { TaskJson, TurnOutcome, TurnParams } from "../boundary/index.js";
import type { AnalyticsDataset } from "../telemetry/index.js";
import type { HitlTarget, RequestBody } from "../round/hitl/index.js";

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

/** What a round of a turn is handed. */
export interface TurnContext {
  task: TaskJson;
  /** The text of the message that opened the task. */
  text: string;
  /** This deployment's origin (see `requireSelfOrigin`). */
  origin: string;
  /** The turn's Workflow instance, which the round's events name. */
  turnId?: string;
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

/** What a round of the agent's loop came to, as the lifecycle handles it. */
export type RoundStep =
  | { kind: "done"; outcome: TurnOutcome }
  | { kind: "continue"; text: string }
  /** The round waits for a human: the lifecycle parks the task on this request. */
  | { kind: "ask"; target: HitlTarget; body: RequestBody }
  /** The turn's signal aborted the round (the task was canceled). */
  | { kind: "canceled" };
