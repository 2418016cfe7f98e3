import type { WorkflowStepConfig } from "cloudflare:workers";
import type { DeadLetter, TurnParams, TurnStep } from "../boundary/index.js";
import { analyticsSink, PushLog, Telemetry, type AnalyticsDataset, type EventScope } from "../telemetry/index.js";
import { retriesAfter, type PushSchedule } from "./delivery-schedule.js";
import type { PushAttempt } from "../a2a/push-delivery.js";

// What the turn Workflow's steps record, and how each step is retried. The
// engine keeps a finished step's result and hands it back when an instance
// runs again, also to the next version of this code after a deploy: a result
// recorded by the previous version must still be read as it was meant, so a
// change to any shape here comes with a fixture of the old one
// (test/turn-replay.spec.ts, README "Updating a deployment").

/** A turn's params and the instance running it. */
export type RunningTurn = TurnParams & { instanceId: string };

/** What came of one push attempt, as its step records it: `at` for the schedule; `closed`: it closed the turn too. */
export type AttemptResult = { kind: PushAttempt["kind"]; status: number; at: number; closed?: boolean };
export type TriedPush = AttemptResult & { configId: string };
/** The first push to each config, made by the run step that finished the turn. */
interface FirstPushes {
  seq: number;
  tried: TriedPush[];
  closed: boolean;
}
/** What a run step records: the object's round, except that a finished turn is recorded as its first pushes (`pushed`), not as the push it built. */
export type RunStep = Exclude<TurnStep, { kind: "finished" }> | { kind: "pushed"; state: string; pushed: FirstPushes };

/**
 * A push not yet delivered to some configs, on its schedule (docs/protocol.md
 * "Events, streams and pushes"): carried in the Workflow from the step that
 * tried it last, so it derives from recorded steps and is the same on replay.
 * The next event of the task for those configs supersedes it.
 */
export interface Pending {
  /** What its attempts are named after (`ask 2`): their events' ids. */
  name: string;
  seq: number;
  configIds: string[];
  /** Attempts made so far. */
  attempt: number;
  /** When the first was made (epoch ms): its hour counts from there. */
  first: number;
}

/** One try at a request's push (its first attempts, or the next), as its step records it. */
export interface AskTry {
  /** What is left to try after this one. */
  pending?: Pending;
  /** Deliveries given up in it. */
  letters: DeadLetter[];
  /** How long the answer is waited for before the next try (with nothing pending: at all). */
  waitMs: number;
  /** The wait is over (past the request's expiry and the margin): no attempt was made, and none follows. */
  over?: boolean;
}

/**
 * A round, and for the round that answers the first push to each config: a couple of retries for
 * a crashed isolate (the recorded outcome spares the model; the push may go again); the fallback
 * model is tried inside.
 */
export const RUN_STEP: WorkflowStepConfig = { retries: { limit: 2, delay: "5 seconds", backoff: "exponential" }, timeout: "10 minutes" };
/** One push attempt; its retries are for the object or the isolate failing, the gatekeeper's refusals are scheduled (delivery-schedule.ts). */
export const ATTEMPT_STEP: WorkflowStepConfig = { retries: { limit: 3, delay: "2 seconds", backoff: "exponential" }, timeout: "30 seconds" };
/** A round of attempts to several configs in one step (a request's push): each attempt gives up after 15 s (src/a2a/push-delivery.ts). */
export const DELIVERY_STEP: WorkflowStepConfig = { retries: { limit: 3, delay: "2 seconds", backoff: "exponential" }, timeout: "10 minutes" };
/** An attempt's fetch gives up after 15 s (src/a2a/push-delivery.ts); the object allows that much past a wait. */
export const ATTEMPT_TIMEOUT_MS = 30_000;
/**
 * A progress push is best effort: one attempt, and its failure is swallowed. A push it supersedes gets
 * its last attempt first, in the same step, so the step allows the attempts' own timeouts.
 */
export const PROGRESS_STEP: WorkflowStepConfig = { retries: { limit: 0, delay: "1 second" }, timeout: "10 minutes" };
/** A guard against a turn that never ends; the agent's own round budget is far below it. */
export const MAX_ROUNDS = 64;
/** A guard against a turn that asks forever. */
export const MAX_PARKS = 64;
/** How long past a request's expiry the Workflow waits for the object's event before asking it itself. */
export const WAIT_MARGIN_MS = 10 * 60_000;
export const QUICK_STEP: WorkflowStepConfig = { retries: { limit: 5, delay: "1 second", backoff: "exponential" }, timeout: "30 seconds" };

/** The ids a push event of the turn is about. */
export function eventScope(turn: RunningTurn, contextId?: string): EventScope {
  return {
    tenant: turn.tenant,
    ...(turn.caller ? { caller: turn.caller } : {}),
    taskId: turn.taskId,
    ...(contextId ? { contextId } : {}),
    turnId: turn.instanceId,
    ...(turn.trace ? { traceId: turn.trace.traceId } : {}),
  };
}

/**
 * What a round of attempts of event `seq` leaves (the `attempt`-th of a
 * delivery whose first began at `first`, or began in this round): the
 * configs to try again, and the ones given up (refused for good, or out of
 * their hour) as dead letters.
 */
export function settleRound(
  round: readonly TriedPush[],
  seq: number,
  attempt: number,
  first: number | undefined,
  schedule: PushSchedule,
): { next: string[]; letters: DeadLetter[]; first: number } {
  const began = first ?? round[0]?.at ?? Date.now();
  const next: string[] = [];
  const letters: DeadLetter[] = [];
  for (const tried of round) {
    if (tried.kind === "delivered" || tried.kind === "skipped") continue;
    if (tried.kind === "transient" && retriesAfter(attempt, tried.at, began, schedule)) next.push(tried.configId);
    else letters.push({ configId: tried.configId, seq, status: tried.status, at: new Date(tried.at).toISOString() });
  }
  return { next, letters, first: began };
}

/** A turn's own events (push attempts): its log as its agent chose (docs/telemetry.md "Which lines") and Analytics Engine when bound; no subscribers. */
export interface TurnEvents {
  telemetry: Telemetry;
  log: PushLog;
}

const turnEvents = new WeakMap<RunningTurn, TurnEvents>();

/** The events of `turn` (one run of its Workflow instance): made at the first. */
export function turnEventsOf(env: { A2A_SIGNING_KEY?: string; OPENAI_API_KEY?: string; A2A_ANALYTICS?: AnalyticsDataset }, turn: RunningTurn): TurnEvents {
  let events = turnEvents.get(turn);
  if (!events) {
    const log = new PushLog(turn.eventLines === true);
    const sinks = env.A2A_ANALYTICS ? [log.sink, analyticsSink(env.A2A_ANALYTICS)] : [log.sink];
    events = { log, telemetry: new Telemetry({ sinks, secrets: [env.A2A_SIGNING_KEY, env.OPENAI_API_KEY] }) };
    turnEvents.set(turn, events);
  }
  return events;
}
