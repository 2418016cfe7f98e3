import { describe, expect, it } from "vitest";
import { heldTool } from "./support/agents.js";
import { markerEdge } from "./support/isolated-edge.js";
import { useMarkerHarness } from "./support/turn-harness.js";
import { chatCompletion, chatToolCall, eventually, type Outbound, holdModel } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";

// CancelTask stops the work, not only the record: the round's model call and
// its tools see the abort, the canceled push is the task's last word, and
// nothing of the canceled turn is in the conversation the next turn reads.

const harness = useMarkerHarness();

type Tenant = "marker" | "marker-researcher";
const edge = markerEdge();
const newCaller = (tenant: Tenant) => ({ tenant, identity: { key: `caller-${crypto.randomUUID()}` } });
const rpc = (method: string, params: Record<string, unknown>, mint: ReturnType<typeof newCaller>) => call(method, params, { worker: edge.fetch, mint });

const pushesOf = (taskId: string) => harness.outbound.pushes.filter((p) => (p.body.task?.id ?? p.body.statusUpdate?.taskId) === taskId);
const stateOf = (p: Outbound["pushes"][number]) => p.body.task?.status?.state ?? p.body.statusUpdate?.status?.state;
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

describe("CancelTask stops the running turn", () => {
  it("aborts the round's model call and pushes canceled as the task's last event", async () => {
    const held = holdModel(harness.outbound);
    const caller = newCaller("marker");
    const task = (await rpc("SendMessage", sendParams("a long question"), caller)).body.result.task;
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call to start",
    );

    const canceled = await rpc("CancelTask", { id: task.id }, caller);
    expect(canceled.body.result.status.state).toBe("TASK_STATE_CANCELED");
    await eventually(
      () => held[0]!.call.signal.aborted,
      (aborted) => aborted,
      "the model call to see the abort",
    );
    await eventually(
      () => pushesOf(task.id).map(stateOf),
      (states) => states.includes("TASK_STATE_CANCELED"),
      "the canceled push",
    );
    held[0]!.release("late answer"); // too late: nothing may come of it
    await settle();
    expect(pushesOf(task.id).map(stateOf).at(-1)).toBe("TASK_STATE_CANCELED");
    expect((await rpc("GetTask", { id: task.id }, caller)).body.result.status.state).toBe("TASK_STATE_CANCELED");
    expect(held).toHaveLength(1); // no retry of an aborted call
  });

  it("aborts a tool that is running, and no model step follows it", async () => {
    const before = { ...heldTool };
    harness.outbound.model = (c) => chatToolCall("hold_tool", {}, c.model);
    const caller = newCaller("marker");
    const task = (await rpc("SendMessage", sendParams("hold on"), caller)).body.result.task;
    await eventually(
      () => heldTool.started,
      (n) => n > before.started,
      "the tool to start",
    );
    const callsAtCancel = harness.outbound.modelCalls.length;

    await rpc("CancelTask", { id: task.id }, caller);
    await eventually(
      () => heldTool.aborted,
      (n) => n > before.aborted,
      "the tool to see the abort",
    );
    heldTool.release();
    await settle();
    expect(harness.outbound.modelCalls).toHaveLength(callsAtCancel);
    expect(pushesOf(task.id).map(stateOf).at(-1)).toBe("TASK_STATE_CANCELED");
  });

  it("leaves no trace of the canceled turn in the conversation", async () => {
    const held = holdModel(harness.outbound);
    const caller = newCaller("marker");
    const first = (await rpc("SendMessage", sendParams("the canceled words"), caller)).body.result.task;
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call to start",
    );
    await rpc("CancelTask", { id: first.id }, caller);
    held[0]!.release("late answer");

    harness.outbound.model = (c) => chatCompletion("fresh answer", c.model);
    const next = { ...sendParams("the next words"), message: { ...sendParams("the next words").message, contextId: first.contextId } };
    const second = (await rpc("SendMessage", next, caller)).body.result.task;
    expect(second.contextId).toBe(first.contextId);
    await eventually(
      () => pushesOf(second.id).map(stateOf),
      (states) => states.includes("TASK_STATE_COMPLETED"),
      "the next turn's answer",
    );
    const read = harness.outbound.modelCalls
      .at(-1)!
      .messages.map((m) => JSON.stringify(m.content))
      .join("\n");
    expect(read).toContain("the next words");
    expect(read).not.toContain("the canceled words");
    expect(read).not.toContain("late answer");
  });

  it("a canceled round announces no progress afterwards and starts no further round", async () => {
    const held = holdModel(harness.outbound);
    const caller = newCaller("marker-researcher");
    const task = (await rpc("SendMessage", sendParams("research it"), caller)).body.result.task;
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the first round's model call",
    );
    await rpc("CancelTask", { id: task.id }, caller);
    await eventually(
      () => pushesOf(task.id).map(stateOf),
      (states) => states.includes("TASK_STATE_CANCELED"),
      "the canceled push",
    );
    const pushesAtCancel = pushesOf(task.id).length;
    // Had the round survived, this answer would delegate and start round two.
    harness.outbound.model = (c) => chatToolCall("delegate", { subtasks: [{ type: "echo_task", params: { say: "x" } }] }, c.model);
    held[0]!.release("late answer");
    await settle();
    expect(pushesOf(task.id)).toHaveLength(pushesAtCancel);
    expect(held).toHaveLength(1);
  });
});
