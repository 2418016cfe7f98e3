import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import { mark } from "./support/agents.js";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { useMarkerHarness } from "./support/turn-harness.js";
import { chatCompletion, chatToolCall, eventually, holdModel } from "./support/outbound.js";
import { call, drain, openStream, userMessage } from "./support/rpc.js";

// SendMessage without `returnImmediately` holds the call until the task is
// terminal or interrupted (docs/protocol.md "SendMessage"), push config or not.

const harness = useMarkerHarness();

const edge = markerEdge();
function newCaller() {
  const key = `caller-${crypto.randomUUID()}`;
  return {
    mint: { tenant: "marker", identity: { key } },
    stub: env.MARKER_AGENT!.get(env.MARKER_AGENT!.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "marker", key }))),
  };
}
type Caller = ReturnType<typeof newCaller>;
const rpc = (method: string, params: Record<string, unknown>, who: Caller) => call(method, params, { worker: edge.fetch, mint: who.mint });

describe("blocking SendMessage", () => {
  it("holds the call until the task completes and answers with it, artifacts included", async () => {
    const who = newCaller();
    const reply = await rpc("SendMessage", { message: userMessage("hold me") }, who);
    expect(reply.status).toBe(200);
    expect(reply.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(reply.body.result.task.artifacts[0].parts[0].text).toBe("echo: hold me");
  });

  it("with a push config too: the same answer, and the push still goes out", async () => {
    const who = newCaller();
    const reply = await rpc(
      "SendMessage",
      { message: userMessage("and push"), configuration: { taskPushNotificationConfig: { url: PUSH_URL, token: "t" } } },
      who,
    );
    expect(reply.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    await eventually(
      () => harness.outbound.pushes.find((p) => p.body.task?.id === reply.body.result.task.id),
      (p) => p !== undefined,
      "the terminal push",
    );
  });

  it("returnImmediately answers with the submitted task at once", async () => {
    const held = holdModel(harness.outbound);
    const who = newCaller();
    const reply = await rpc("SendMessage", { message: userMessage("quick"), configuration: { returnImmediately: true } }, who);
    expect(reply.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    held[0]!.release("done");
  });

  it("ends at input-required; the answer, blocking too, waits again and ends completed", async () => {
    harness.outbound.model = (c) =>
      c.messages.some((m) => m.role === "tool") ? chatCompletion("picked", c.model) : chatToolCall("ask_user", { question: "Which?" }, c.model);
    const who = newCaller();
    const waiting = (await rpc("SendMessage", { message: userMessage("ask me") }, who)).body.result.task;
    expect(waiting.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const answered = await rpc("SendMessage", { message: userMessage("that one", undefined, { taskId: waiting.id }) }, who);
    expect(answered.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("a retried blocking send re-attaches to the same wait: one turn, one model call, the same answer", async () => {
    const held = holdModel(harness.outbound);
    const who = newCaller();
    const params = { message: userMessage("once", crypto.randomUUID()) };
    const first = rpc("SendMessage", params, who);
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    const retry = rpc("SendMessage", params, who);
    held[0]!.release("the one answer");
    const [a, b] = await Promise.all([first, retry]);
    expect(a.body.result.task.id).toBe(b.body.result.task.id);
    expect(b.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(b.body.result.task.artifacts[0].parts[0].text).toBe("the one answer");
    expect(held).toHaveLength(1);
  });

  it("an object reset under the wait is not the caller's problem: the new instance reads the task and the call ends", async () => {
    const held = holdModel(harness.outbound);
    const who = newCaller();
    const pending = rpc("SendMessage", { message: userMessage("survive") }, who);
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    // The object resets (as a deploy or a crash does): everything in its memory, the wait included, is gone.
    await runInDurableObject(who.stub, (_instance, state) => state.abort("the spec resets the object")).catch(() => undefined);
    // The turn's step is retried on the new instance; its model call is answered.
    await eventually(
      () => held.length,
      (n) => n > 1,
      "the retried model call",
    );
    for (const entry of held) entry.release("after the reset");
    const reply = await pending;
    expect(reply.status).toBe(200);
    expect(reply.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("the turn does not hang on the call: one nobody waits for still completes and is announced", async () => {
    const held = holdModel(harness.outbound);
    const who = newCaller();
    // Abandoned: nobody reads this reply. The pool cannot cut a connection, so this stands for a caller who hung up.
    void rpc("SendMessage", { message: userMessage("gone"), configuration: { taskPushNotificationConfig: { url: PUSH_URL } } }, who).catch(() => undefined);
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    held[0]!.release("still answered");
    const push = await eventually(
      () => harness.outbound.pushes.find((p) => p.body.task?.status?.state === "TASK_STATE_COMPLETED"),
      (p) => p !== undefined,
      "the terminal push",
    );
    expect(push!.body.task.artifacts[0].parts[0].text).toBe("still answered");
  });

  it("an agent may answer with a message instead of a task; a retry gets the same message, returnImmediately a task", async () => {
    const who = newCaller();
    const params = { message: userMessage("say it #message", crypto.randomUUID()) };
    const first = await rpc("SendMessage", params, who);
    expect(first.body.result.task).toBeUndefined();
    expect(first.body.result.message).toMatchObject({ role: "ROLE_AGENT", parts: [{ text: mark("direct") }] });
    expect((await rpc("SendMessage", params, who)).body.result).toEqual(first.body.result);
    expect((await rpc("ListTasks", {}, who)).body.result.totalSize).toBe(0);
    const streamed = await drain(
      await openStream("SendStreamingMessage", { message: userMessage("stream it #message") }, { worker: edge.fetch, mint: who.mint }),
    );
    expect(streamed).toHaveLength(1);
    expect(streamed[0]!.result.message.parts[0].text).toBe(mark("direct"));
    const immediate = await rpc("SendMessage", { message: userMessage("now #message"), configuration: { returnImmediately: true } }, who);
    expect(immediate.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
  });
});
