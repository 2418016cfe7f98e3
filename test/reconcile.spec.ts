import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { AgentDB } from "@dynamicagents/core/db";
import { DEFAULT_RECOVERY_POLICY, type RecoveryPolicy } from "@dynamicagents/core/host";
import { reconcileTurns } from "../src/host/reconcile-turns.js";
import { describe, expect, it } from "vitest";

const policy: RecoveryPolicy = { ...DEFAULT_RECOVERY_POLICY, runGraceMs: 60_000, stallAfterMs: 600_000, maxRedrives: 3 };

/**
 * The reconciler's decisions, against a real turn ledger and a Workflow
 * binding that reports whatever status the case needs (the engine cannot be
 * made to show a lost "running" instance on demand).
 */
async function decide(options: { status: string; ageMs: number; outcome?: boolean; runningHere?: boolean; attempts?: number }) {
  const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
  return runInDurableObject(stub, async (_instance, state) => {
    const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
    const task = { id: crypto.randomUUID() };
    db.tasks.insert({ id: task.id, messageId: "m", contextId: "c", state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
    const abandoned: string[] = [];
    db.turns.open(task.id, "turn-1", { tenant: "assistant", agentId: "a", taskId: task.id, messageId: "m", origin: "https://agents.test" });
    if (options.outcome) db.turns.recordOutcome(task.id, { state: "TASK_STATE_COMPLETED", text: "done" });
    for (let i = 0; i < (options.attempts ?? 0); i++) db.turns.redriven(task.id, "turn-1");
    const actions: string[] = [];
    const instance = {
      status: async () => ({ status: options.status }),
      restart: async () => void actions.push("restart"),
    };
    const workflow = {
      get: async (id: string) => {
        if (options.status === "unknown") throw new Error("instance.not_found");
        return { id, ...instance };
      },
    } as unknown as Workflow;
    const now = db.turns.get(task.id)!.progressAt + options.ageMs;
    const remaining = await reconcileTurns({
      ledger: db.turns,
      abandon: (taskId) => void abandoned.push(taskId),
      workflow: workflow as never,
      policy,
      now: () => now,
      start: async (id) => void actions.push(`start ${id}`),
      runningHere: () => options.runningHere ?? false,
    });
    return { actions, remaining, abandoned: abandoned.includes(task.id), attempts: db.turns.get(task.id)?.attempts };
  });
}

describe("the turn reconciler", () => {
  it("leaves a healthy running turn alone", async () => {
    expect((await decide({ status: "running", ageMs: 5_000 })).actions).toEqual([]);
  });

  it("leaves a turn alone whose model work runs in this object, however long it takes", async () => {
    expect((await decide({ status: "running", ageMs: 300_000, runningHere: true })).actions).toEqual([]);
  });

  it("restarts a 'running' instance that lost its turn before the outcome (a killed local engine)", async () => {
    expect((await decide({ status: "running", ageMs: 61_000 })).actions).toEqual(["restart"]);
  });

  it("lets a turn past its outcome sit in delivery backoff until the stall deadline", async () => {
    expect((await decide({ status: "running", ageMs: 300_000, outcome: true })).actions).toEqual([]);
    expect((await decide({ status: "running", ageMs: 601_000, outcome: true })).actions).toEqual(["restart"]);
  });

  it("restarts an errored or terminated instance and starts an unknown one", async () => {
    expect((await decide({ status: "errored", ageMs: 0 })).actions).toEqual(["restart"]);
    expect((await decide({ status: "terminated", ageMs: 0 })).actions).toEqual(["restart"]);
    expect((await decide({ status: "unknown", ageMs: 0 })).actions).toEqual(["start turn-1"]);
  });

  it("closes a turn whose instance completed", async () => {
    expect(await decide({ status: "complete", ageMs: 0 })).toMatchObject({ actions: [], remaining: 0 });
  });

  it("after the last re-drive fails the task and starts an instance that only announces it", async () => {
    const result = await decide({ status: "errored", ageMs: 0, attempts: 3 });
    expect(result.actions).toEqual(["start turn-1-final"]);
    expect(result.abandoned).toBe(true);
    expect(result.remaining).toBe(1);
  });

  it("gives up once even the announcing instance failed", async () => {
    expect(await decide({ status: "errored", ageMs: 0, attempts: 4 })).toMatchObject({ actions: [], remaining: 0 });
  });
});
