import { describe, expect, it } from "vitest";
import { DEFAULT_RECOVERY_POLICY } from "@dynamicagents/core/host";
import { TurnSchedules, type OpenTurns, type ScheduleCalls } from "../src/host/turn-schedules.js";

// The object's reconcile interval (src/host/turn-schedules.ts), against a scheduler that keeps
// its intervals in a set, as the agents SDK does: arming one that exists adds nothing.
function scheduler(onStop?: () => Promise<void>) {
  const intervals = new Set<string>();
  const calls: ScheduleCalls = {
    reconcileEvery: async () => intervals.add("reconcileTurns"),
    reconcileAt: async () => undefined,
    reconcilePending: async () => false,
    stopReconcileEvery: async () => {
      await onStop?.();
      intervals.delete("reconcileTurns");
    },
    retentionEvery: async () => intervals.add("sweepRetention"),
  };
  return { intervals, calls };
}

describe("the reconcile interval", () => {
  it("stays armed when a turn opens while it is being stopped", async () => {
    let open = 0;
    const turns: OpenTurns = {
      get size() {
        return open;
      },
      all: () => [],
    };
    let schedules: TurnSchedules | undefined;
    // A send comes in at the stop's await: its turn is recorded and it arms the interval the stop then cancels.
    const { intervals, calls } = scheduler(async () => {
      open = 1;
      await schedules!.ensureReconciling();
    });
    schedules = new TurnSchedules(calls, turns, () => DEFAULT_RECOVERY_POLICY);
    await schedules.ensureReconciling();
    open = 0;
    await schedules.stopReconciling();
    expect(intervals.has("reconcileTurns")).toBe(true);
  });

  it("goes when no turn is open", async () => {
    const turns: OpenTurns = { size: 0, all: () => [] };
    const { intervals, calls } = scheduler();
    const schedules = new TurnSchedules(calls, turns, () => DEFAULT_RECOVERY_POLICY);
    await schedules.ensureReconciling();
    await schedules.stopReconciling();
    expect(intervals.has("reconcileTurns")).toBe(false);
  });
});
