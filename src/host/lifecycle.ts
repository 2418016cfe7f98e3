import type { TestClockEnv } from "../a2a/test-clock.js";
import type { ModelEnv } from "../agent/model-config.js";
import type { HitlWords } from "../agent/policy.js";
import type { MessageJson, TaskJson, TurnOutcome, TurnParams } from "../boundary/index.js";
import type { RoundStep, TurnContext } from "../round/deps.js";
import type { AnalyticsDataset } from "../telemetry/index.js";
import type { AgentDB } from "../db/agent-db.js";
import type { AgentErasure } from "../db/erasure-run.js";
import type { RetentionRules } from "../db/retention.js";
import type { TurnReports } from "../db/turn-reports.js";
import type { ObjectEvents } from "../telemetry/object-events.js";
import type { EventHub } from "./event-hub.js";
import type { RecoveryPolicy } from "./recovery-policy.js";
import type { SelfOrigin } from "./self-origin.js";
import type { TurnSchedules } from "./turn-schedules.js";

// What the caller's object (TaskAgent, its modules) and the agent on top of
// it (DynamicAgent) hand each other: the rounds go down, the words, bounds
// and rules the lifecycle needs come up.

/** The bindings and variables the caller's object reads (test clocks: docs/gatekeeper.md "Test clocks"). */
export interface AgentEnv extends ModelEnv, TestClockEnv {
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
  /** Tokens one caller may spend per UTC day; `undefined`: no cap. */
  tokensPerCallerPerDay: number | undefined;
  retention: RetentionRules;
  /** How long a request to a human waits before it expires. */
  hitlExpiresAfterMs: number;
}

/**
 * What the agent decides, read at each use (an agent's seams on `TaskAgent`
 * and `DynamicAgent`): the modules of the caller's object take it from here,
 * never from the class.
 */
export interface AgentRules {
  words(): LifecycleWords;
  limits(): LifecycleLimits;
  recovery(): RecoveryPolicy;
  workflow(): Workflow<TurnParams>;
  /** Whether events may carry message text. */
  carriesText(): boolean;
  directReply(message: MessageJson): MessageJson | undefined;
  /** A turn the agent ends as it starts, before any round (no such turn: `undefined`). */
  outcomeAtStart(task: TaskJson): TurnOutcome | undefined;
  runRound(turn: TurnContext, round: number, signal: AbortSignal): Promise<RoundStep>;
  afterTurn(task: TaskJson): void;
  canceled(taskId: string): void;
  tasksDeleted(subtaskIds: readonly string[]): Promise<void>;
  /** The agent's part in one erasure: its subagents, its plugins' stores and state. */
  erasure(): AgentErasure;
  /** The SDK's scheduler, for a callback of the object's by name. */
  schedule(at: Date, callback: "expireRequest", payload: { requestId: string }): Promise<unknown>;
  agentId(): string;
  /** The card key (`A2A_SIGNING_KEY`): events hash callers under a key derived from it. */
  signingKey(): string | undefined;
}

/** What the caller's object's modules share: its storage, who follows its tasks, its events, its turns' reports and schedules, the agent's rules. */
export interface ObjectParts {
  db: AgentDB;
  hub: EventHub;
  events: ObjectEvents;
  origin: SelfOrigin;
  reports: TurnReports;
  schedules: TurnSchedules;
  agent: AgentRules;
}
