import { env } from "cloudflare:workers";
import { introspectWorkflow } from "cloudflare:test";
import type { VerifiedCaller } from "@dynamicagents/core/a2a";
import type { TurnToStart } from "@dynamicagents/core/boundary";
import { describe, expect, it, vi } from "vitest";
import { GATEKEEPER } from "./support/constants.js";
import { isolatedEdge, stubAgent } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";

const submitted = (id: string, messageId: string) => ({
  id,
  contextId: `ctx-${id}`,
  status: { state: "TASK_STATE_SUBMITTED", timestamp: "2026-12-01T00:00:00.000Z" },
  history: [{ messageId, role: "ROLE_USER", parts: [{ text: "hi" }] }],
});

/**
 * A caller's object that behaves as the real one will: the first SendMessage
 * for a messageId creates the task and names its turn, a retry names none.
 */
function objectNamingTurns() {
  const tasks = new Map<string, ReturnType<typeof submitted>>();
  return stubAgent({
    beginTask: (input: { message: { messageId: string } }) => {
      const messageId = input.message.messageId;
      const existing = tasks.get(messageId);
      if (existing) return { ok: true, value: { task: existing } };
      const task = submitted(`task-${tasks.size + 1}`, messageId);
      tasks.set(messageId, task);
      return { ok: true, value: { task, turn: { instanceId: `turn-${messageId}`, params: { taskId: task.id, marker: "PARAMS-MARKER" } } } };
    },
  });
}

describe("resolveAgent", () => {
  it("is how the edge addresses the caller's object: given the verified caller, the tenant and the env", async () => {
    using _ = interceptOutbound();
    const seen: Array<{ caller: VerifiedCaller; tenant: string; hasEnv: boolean }> = [];
    const edge = isolatedEdge({
      resolveAgent: (caller, tenant, e) => {
        seen.push({ caller, tenant, hasEnv: e.ASSISTANT !== undefined });
        return stubAgent({ getTask: (query: { taskId: string }) => ({ ok: true, value: submitted(query.taskId, "m-1") }) });
      },
    });
    const reply = await call("GetTask", { id: "t-9" }, { worker: edge.fetch, mint: { identity: { key: "ada" } } });
    expect(reply.status).toBe(200);
    expect(reply.body.result).toMatchObject({ id: "t-9", status: { state: "TASK_STATE_SUBMITTED" } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ tenant: "assistant", hasEnv: true, caller: { tenant: "assistant", issuer: GATEKEEPER, identity: { key: "ada" } } });
    // The real namespaces were never touched.
    expect(edge.doAccesses()).toBe(0);
  });

  it("is not called for a method that needs no object", async () => {
    using _ = interceptOutbound();
    const resolveAgent = vi.fn(() => stubAgent({}));
    const edge = isolatedEdge({ resolveAgent });
    const reply = await call("GetExtendedAgentCard", {}, { worker: edge.fetch });
    expect(reply.status).toBe(200);
    expect(resolveAgent).not.toHaveBeenCalled();
  });
});

describe("startTurn", () => {
  it("is called once for each turn the object names, never when it names none, and the reply names no turn", async () => {
    using _ = interceptOutbound();
    const started: TurnToStart[] = [];
    const object = objectNamingTurns();
    const edge = isolatedEdge({ resolveAgent: () => object, startTurn: async (turn) => void started.push(turn) });

    const first = await call("SendMessage", sendParams("hi", "m-1"), { worker: edge.fetch });
    const retry = await call("SendMessage", sendParams("hi", "m-1"), { worker: edge.fetch });
    const other = await call("SendMessage", sendParams("hi", "m-2"), { worker: edge.fetch });
    await edge.backgroundSettled();

    expect(first.body.result.task.id).toBe(retry.body.result.task.id);
    expect(first.body.result).not.toHaveProperty("turn");
    expect(Object.keys(first.body.result)).toEqual(["task"]);
    expect(started).toEqual([
      { instanceId: "turn-m-1", params: { taskId: first.body.result.task.id, marker: "PARAMS-MARKER" } },
      { instanceId: "turn-m-2", params: { taskId: other.body.result.task.id, marker: "PARAMS-MARKER" } },
    ]);
  });

  it("never delays the reply: it runs after it, in waitUntil", async () => {
    using _ = interceptOutbound();
    let release!: () => void;
    const startTurn = vi.fn(() => new Promise<void>((resolve) => (release = resolve)));
    const edge = isolatedEdge({ resolveAgent: () => objectNamingTurns(), startTurn });
    const reply = await call("SendMessage", sendParams("hi", "m-1"), { worker: edge.fetch });
    // Answered while the start is still pending.
    expect(reply.status).toBe(200);
    expect(startTurn).toHaveBeenCalledTimes(1);
    release();
    await edge.backgroundSettled();
  });

  it("logs a failure with the instance id and without the turn's params, and still answers the call", async () => {
    using _ = interceptOutbound();
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const edge = isolatedEdge({ resolveAgent: () => objectNamingTurns(), startTurn: () => Promise.reject(new Error("engine unavailable")) });
      const reply = await call("SendMessage", sendParams("hi", "m-1"), { worker: edge.fetch });
      await edge.backgroundSettled();
      expect(reply.status).toBe(200);
      expect(reply.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
      const lines = logged.mock.calls.map((args) => args.map(String).join(" "));
      expect(lines.some((line) => line.includes("turn-m-1") && line.includes("engine unavailable"))).toBe(true);
      expect(lines.join("\n")).not.toContain("PARAMS-MARKER");
    } finally {
      logged.mockRestore();
    }
  });

  it("by default creates the instance on TURN_WORKFLOW, an instance that already exists counting as started", async () => {
    using _ = interceptOutbound();
    await using workflows = await introspectWorkflow(env.TURN_WORKFLOW);
    await workflows.modifyAll(async (m) => {
      await m.disableRetryDelays();
      await m.mockStepError({ name: "run" }, new Error("held by the seam specs"));
    });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const instanceId = `turn-seam-${crypto.randomUUID()}`;
      const object = stubAgent({
        beginTask: () => ({ ok: true, value: { task: submitted("t-1", "m"), created: true, turn: { instanceId, params: { taskId: "t-1" } } } }),
      });
      const edge = isolatedEdge({ resolveAgent: () => object });
      // Twice with the same instance, one after the other: the second create finds it there.
      for (let i = 0; i < 2; i++) {
        expect((await call("SendMessage", sendParams("hi"), { worker: edge.fetch })).status).toBe(200);
        await edge.backgroundSettled();
      }
      expect((await env.TURN_WORKFLOW.get(instanceId)).id).toBe(instanceId);
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it("by default, without TURN_WORKFLOW, logs a configuration error naming the binding and leaves the turn to the object", async () => {
    using _ = interceptOutbound();
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const edge = isolatedEdge({ resolveAgent: () => objectNamingTurns() }, { TURN_WORKFLOW: undefined });
      const reply = await call("SendMessage", sendParams("hi", "m-1"), { worker: edge.fetch });
      await edge.backgroundSettled();
      expect(reply.status).toBe(200);
      const lines = logged.mock.calls.map((args) => args.map(String).join(" "));
      expect(lines.some((line) => line.includes("turn-m-1") && line.includes("ERR_CONFIG_MISSING") && line.includes("TURN_WORKFLOW"))).toBe(true);
    } finally {
      logged.mockRestore();
    }
  });
});
