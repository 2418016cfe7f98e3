// The push schedule (docs/protocol.md "Events, streams and pushes"): a
// transient refusal is tried again after 2 s, then twice as long each time,
// at most 5 minutes apart, and no attempt starts more than an hour after the first.
// Test clocks shorten each (docs/gatekeeper.md "Test clocks").
import type { TestClock } from "../a2a/test-clock.js";

/** The schedule's three durations, in milliseconds. */
export interface PushSchedule {
  firstWaitMs: number;
  maxWaitMs: number;
  /** No attempt starts later than this after the first. */
  windowMs: number;
}

const SCHEDULE: PushSchedule = { firstWaitMs: 2_000, maxWaitMs: 5 * 60_000, windowMs: 60 * 60_000 };

/** The schedule as the test clocks (if any) set it. */
export const pushSchedule = (clock: TestClock): PushSchedule => ({
  firstWaitMs: clock.pushFirstRetryMs ?? SCHEDULE.firstWaitMs,
  maxWaitMs: clock.pushMaxWaitMs ?? SCHEDULE.maxWaitMs,
  windowMs: clock.pushWindowMs ?? SCHEDULE.windowMs,
});

/** The wait after attempt `attempt` (1-based) before the next. */
export const waitAfter = (attempt: number, schedule: PushSchedule): number => Math.min(schedule.maxWaitMs, schedule.firstWaitMs * 2 ** (attempt - 1));

/** Whether an attempt made at `at`, `attempt`-th of a delivery begun at `first`, is followed by another. */
export const retriesAfter = (attempt: number, at: number, first: number, schedule: PushSchedule): boolean =>
  at + waitAfter(attempt, schedule) <= first + schedule.windowMs;
