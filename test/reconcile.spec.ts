import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { AgentDB } from "@dynamicagents/core/db";
import { DEFAULT_RECOVERY_POLICY, type RecoveryPolicy } from "@dynamicagents/core/host";
import { describe, expect, it } from "vitest";
import { reconcileTurns } from "../src/host/recovery.js";

const policy: RecoveryPolicy = { ...DEFAULT_RECOVERY_POLICY, reportWithinMs: 60_000, lostAfterMs: 30_000, maxRedrives: 3 };
const T0 = 1_800_000_000_000;

interface Case {
  /** What the Workflows API says of the instance; `not-found` is its definite not-found, `outage` any other failure. */
  status: string;
  /** Milliseconds after the last report that the pass runs (the injected clock). */
  after: number;
  /** The last report promised the next one this much later than usual (a delivery in backoff). */
  backoffMs?: number;
  runningHere?: boolean;
  attempts?: number;
  /** The API fails on restart() / create() for this pass. */
  restartFails?: boolean;
  startFails?: boolean;
  /** While the restart is in flight, the turn closes and a re-delivery opens a record of its own under this id. */
  reopenedAs?: string;
}

/**
 * One pass of the reconciler over one turn, against a real turn ledger in a
 * real object and a Workflows binding that answers as the case says, on an
 * injected clock (no waiting in real time).
 */
async function pass(c: Case) {
  const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
  return runInDurableObject(stub, async (_instance, state) => {
    let now = T0;
    const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES, () => now);
    const taskId = crypto.randomUUID();
    db.tasks.insert({ id: taskId, messageId: "m", contextId: "c", state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
    db.turns.open(taskId, "turn-1", { tenant: "assistant", agentId: "a", taskId, messageId: "m", origin: "https://agents.test" }, policy.reportWithinMs);
    db.turns.progress(taskId, policy.reportWithinMs + (c.backoffMs ?? 0));
    for (let i = 0; i < (c.attempts ?? 0); i++) db.turns.redriven(taskId, "turn-1", "turn-1", policy.reportWithinMs + (c.backoffMs ?? 0));
    now = T0 + c.after;
    const calls: string[] = [];
    const abandoned: string[] = [];
    const workflow = {
      get: async (id: string) => {
        if (c.status === "not-found") throw new Error("(instance.not_found) Instance does not exist");
        if (c.status === "outage") throw new Error("workflows: 503 service unavailable");
        return {
          id,
          status: async () => ({ status: c.status }),
          restart: async () => {
            calls.push("restart");
            if (c.restartFails) throw new Error("workflows: 500");
            if (c.reopenedAs) {
              db.turns.close(taskId, "turn-1");
              db.turns.open(
                taskId,
                c.reopenedAs,
                { tenant: "assistant", agentId: "a", taskId, messageId: "m", origin: "https://agents.test", redeliver: true },
                1,
              );
            }
          },
        };
      },
    } as unknown as Workflow;
    const actions = await reconcileTurns({
      ledger: db.turns,
      workflow: workflow as never,
      policy,
      now: () => now,
      abandon: (id) => void abandoned.push(id),
      start: async (id) => {
        calls.push(`start ${id}`);
        return !c.startFails;
      },
      runningHere: () => c.runningHere ?? false,
      close: async (id, instanceId) => void db.turns.close(id, instanceId),
    });
    const row = db.turns.get(taskId);
    return {
      action: actions.get(taskId),
      calls,
      abandoned: abandoned.includes(taskId),
      attempts: row?.attempts,
      open: row !== undefined,
      instanceId: row?.instanceId,
    };
  });
}

const SILENT = policy.reportWithinMs + policy.lostAfterMs + 1;

describe("the turn reconciler, on an injected clock", () => {
  it("leaves a turn alone while it reports within what it promised", async () => {
    expect(await pass({ status: "running", after: SILENT - 2 })).toMatchObject({ action: "alive", calls: [] });
    expect(await pass({ status: "waiting", after: SILENT - 2 })).toMatchObject({ action: "alive", calls: [] });
  });

  it("leaves a turn alone whose model work runs in this object, however long it is silent", async () => {
    expect(await pass({ status: "running", after: 10 * SILENT, runningHere: true })).toMatchObject({ action: "alive", calls: [] });
  });

  it("restarts a turn silent past its promise and the grace: lost by a killed engine, found at the next pass", async () => {
    expect(await pass({ status: "running", after: SILENT })).toMatchObject({ action: "restarted", calls: ["restart"], attempts: 1 });
    expect(await pass({ status: "waiting", after: SILENT })).toMatchObject({ action: "restarted", attempts: 1 });
  });

  it("lets a delivery in backoff wait for its next attempt: backoff is progress", async () => {
    const backoffMs = 5 * 60_000;
    expect(await pass({ status: "waiting", after: backoffMs + SILENT - 2, backoffMs })).toMatchObject({ action: "alive", calls: [] });
    expect(await pass({ status: "waiting", after: backoffMs + SILENT, backoffMs })).toMatchObject({ action: "restarted" });
  });

  it("restarts an errored or terminated instance at once, and starts a missing one", async () => {
    expect(await pass({ status: "errored", after: 0 })).toMatchObject({ action: "restarted", calls: ["restart"] });
    expect(await pass({ status: "terminated", after: 0 })).toMatchObject({ action: "restarted", calls: ["restart"] });
    expect(await pass({ status: "not-found", after: 0 })).toMatchObject({ action: "started", calls: ["start turn-1"], attempts: 1 });
  });

  it("closes a turn whose instance completed", async () => {
    expect(await pass({ status: "complete", after: 0 })).toMatchObject({ action: "closed", open: false });
  });

  it("after the last re-drive fails the task and starts an instance that only announces it", async () => {
    expect(await pass({ status: "errored", after: 0, attempts: 3 })).toMatchObject({
      action: "abandoned",
      calls: ["start turn-1-final"],
      abandoned: true,
      attempts: 4,
      open: true,
      instanceId: "turn-1-final",
    });
  });

  it("a re-drive counts against the record it read only: one a re-delivery opened meanwhile stays as it is", async () => {
    expect(await pass({ status: "errored", after: 0, reopenedAs: "redeliver-1" })).toMatchObject({
      action: "restarted",
      calls: ["restart"],
      attempts: 0,
      instanceId: "redeliver-1",
    });
  });

  it("gives up once even the announcing instance failed", async () => {
    expect(await pass({ status: "errored", after: 0, attempts: 4 })).toMatchObject({ action: "gave-up", open: false });
  });
});

describe("outages are not deaths", () => {
  it("a Workflows API that fails says nothing about the instance: no action, no attempt counted", async () => {
    for (const after of [0, SILENT, 10 * SILENT]) {
      expect(await pass({ status: "outage", after })).toMatchObject({ action: "unreachable", calls: [], attempts: 0, open: true });
    }
    // Even at the last attempt: the task is not failed because the API was down.
    expect(await pass({ status: "outage", after: SILENT, attempts: 3 })).toMatchObject({ action: "unreachable", abandoned: false, attempts: 3 });
  });

  it("a restart or a create the API refuses is tried again next pass, not counted as a re-drive", async () => {
    expect(await pass({ status: "errored", after: 0, restartFails: true })).toMatchObject({ action: "failed-to-redrive", calls: ["restart"], attempts: 0 });
    expect(await pass({ status: "not-found", after: 0, startFails: true })).toMatchObject({ action: "failed-to-redrive", attempts: 0 });
  });

  it("only the API's definite not-found counts as a missing instance", async () => {
    const { isInstanceNotFound } = await import("../src/host/recovery.js");
    expect(isInstanceNotFound(new Error("(instance.not_found) Instance does not exist"))).toBe(true);
    expect(isInstanceNotFound(new Error("instance.not_found"))).toBe(true);
    expect(isInstanceNotFound(new Error("internal error"))).toBe(false);
    expect(isInstanceNotFound("instance.not_found")).toBe(false);
  });
});
