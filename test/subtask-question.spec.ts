import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE } from "@dynamicagents/core/a2a";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { useMarkerHarness } from "./support/turn-harness.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";

// A subagent's recipe may ask the human (RecipeContext.ask): the parent's
// task parks on the question, and the answer goes to the subagent, whose
// recipe runs on from where it asked.

const harness = useMarkerHarness();

const edge = markerEdge();

function newCaller() {
  const key = `caller-${crypto.randomUUID()}`;
  const ns = env.MARKER_RESEARCHER!;
  return {
    mint: { tenant: "marker-researcher", identity: { key } },
    stub: ns.get(ns.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "marker-researcher", key }))),
  };
}
type Caller = ReturnType<typeof newCaller>;
const rpc = (method: string, params: Record<string, unknown>, who: Caller) => call(method, params, { worker: edge.fetch, mint: who.mint });

/** Round one delegates the asking subtask; round two answers with what the results said. */
function delegator() {
  harness.outbound.model = (c: ModelCall) =>
    c.tools.includes("delegate")
      ? chatToolCall("delegate", { subtasks: [{ type: "ask_task", params: { about: "which colour" } }] }, c.model)
      : chatCompletion("answered", c.model);
}

async function parked(who: Caller) {
  const task = (await rpc("SendMessage", sendParams("research it"), who)).body.result.task;
  const waiting = await eventually(
    async () => (await rpc("GetTask", { id: task.id }, who)).body.result,
    (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED",
    "the parent's task to wait for input",
  );
  const request = waiting.status.message.parts.find((p: { data?: { type?: string } }) => p.data?.type === HITL_REQUEST_TYPE).data;
  return { task, request };
}

const respond = (taskId: string, body: Record<string, unknown>) => ({
  message: { messageId: crypto.randomUUID(), role: "ROLE_USER", taskId, parts: [{ data: { type: HITL_RESPONSE_TYPE, ...body } }] },
  configuration: { returnImmediately: true, taskPushNotificationConfig: { url: PUSH_URL, token: "notify-secret" } },
});

const finalTask = async (taskId: string) =>
  (await eventually(
    () => harness.outbound.pushes.find((p) => p.body.task?.id === taskId),
    (p) => p !== undefined,
    "the terminal push",
  ))!.body.task;

const subtaskRows = (who: Caller) =>
  runInDurableObject(who.stub, (_i, state) =>
    state.storage.sql.exec<{ status: string; result_json: string | null }>("SELECT status, result_json FROM subtasks").toArray(),
  );

describe("a subagent's question", () => {
  it("parks the parent's task on it, announced, and the answer reaches the subagent, whose result the next round reads", async () => {
    delegator();
    const who = newCaller();
    const { task, request } = await parked(who);
    expect(request).toMatchObject({ requestKind: "choice", prompt: "which colour?", options: [{ id: "a" }, { id: "b" }] });
    await eventually(
      () => harness.outbound.pushes.find((p) => p.body.statusUpdate?.taskId === task.id && p.body.statusUpdate.status.state === "TASK_STATE_INPUT_REQUIRED"),
      (p) => p !== undefined,
      "the input-required push",
    );
    expect(await subtaskRows(who)).toEqual([expect.objectContaining({ status: "waiting" })]);

    await rpc("SendMessage", respond(task.id, { requestId: request.requestId, optionId: "b" }), who);
    expect((await finalTask(task.id)).status.state).toBe("TASK_STATE_COMPLETED");
    const [row] = await subtaskRows(who);
    expect(row!.status).toBe("done");
    expect(JSON.parse(row!.result_json!)).toEqual({ looked: "which colour", answer: { answered: true, optionId: "b", label: "second" } });
    // The model reads the subtask's result; the question itself was never the model's.
    const lastCall = JSON.stringify(harness.outbound.modelCalls.at(-1)!.messages);
    expect(lastCall).toContain('\\"optionId\\":\\"b\\"');
    expect(lastCall).not.toContain("ask_user");
  });

  it("an expired question tells the recipe so, and the turn still finishes", async () => {
    delegator();
    const who = newCaller();
    const { task, request } = await parked(who);
    await runInDurableObject(who.stub, (instance) =>
      (instance as unknown as { expireRequest(p: { requestId: string }): Promise<void> }).expireRequest({ requestId: request.requestId }),
    );
    expect((await finalTask(task.id)).status.state).toBe("TASK_STATE_COMPLETED");
    const [row] = await subtaskRows(who);
    expect(JSON.parse(row!.result_json!).answer).toEqual({ answered: false, reason: "expired" });
  });

  it("a cancel while the subtask waits ends both", async () => {
    delegator();
    const who = newCaller();
    const { task } = await parked(who);
    expect((await rpc("CancelTask", { id: task.id }, who)).body.result.status.state).toBe("TASK_STATE_CANCELED");
    await eventually(
      () => subtaskRows(who),
      (rows) => rows[0]?.status === "canceled",
      "the waiting subtask to be canceled",
    );
    await eventually(
      () => harness.outbound.pushes.find((p) => p.body.task?.id === task.id),
      (p) => p?.body.task.status.state === "TASK_STATE_CANCELED",
      "the canceled push",
    );
  });
});
