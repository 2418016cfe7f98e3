import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE, HITL_TIMEOUT_TYPE } from "@dynamicagents/core/a2a";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import { assistantPolicy } from "../reference/policy.js";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { chatCompletion, chatToolCall, eventually, holdModel, type ModelCall } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";
import { reconcileNow } from "./support/reconcile.js";
import { useTurnHarness } from "./support/turn-harness.js";

const harness = useTurnHarness();
const newCaller = () => ({ identity: { key: `caller-${crypto.randomUUID()}`, name: "Ada" } });
const objectOf = (key: string) => env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key })));

interface Request {
  type: string;
  requestId: string;
  requestKind: "approval" | "choice" | "question";
  prompt: string;
  options?: Array<{ id: string; label: string }>;
  expiresAt: string;
}

const toolMessages = (c: ModelCall) => c.messages.filter((m) => m.role === "tool");

/** The assistant's model: saves a note (needs approval), then says what came of it. */
function noteTaker(text = "buy milk") {
  harness.outbound.model = (c) =>
    toolMessages(c).length === 0
      ? chatToolCall("save_note", { text }, c.model)
      : chatCompletion(`done: ${JSON.stringify(toolMessages(c).at(-1)?.content)}`, c.model);
}

/** A model that asks the user first, then answers with what they said. */
function asker(choices?: Array<{ id: string; label: string }>) {
  harness.outbound.model = (c) =>
    toolMessages(c).length === 0
      ? chatToolCall("ask_user", { question: "Which city do you mean?", ...(choices ? { choices } : {}) }, c.model)
      : chatCompletion(`you said: ${JSON.stringify(toolMessages(c).at(-1)?.content)}`, c.model);
}

async function parked(caller: object, text: string) {
  const task = (await call("SendMessage", sendParams(text), { mint: caller })).body.result.task;
  const waiting = await eventually(
    async () => (await call("GetTask", { id: task.id }, { mint: caller })).body.result,
    (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED",
    "the task to wait for input",
  );
  const data = waiting.status.message.parts.find((p: { data?: { type?: string } }) => p.data?.type === HITL_REQUEST_TYPE)?.data as Request;
  return { task, waiting, request: data };
}

const answerParams = (taskId: string, part: Record<string, unknown>, contextId?: string) => ({
  message: { messageId: crypto.randomUUID(), role: "ROLE_USER", taskId, ...(contextId ? { contextId } : {}), parts: [part] },
  configuration: { returnImmediately: true, taskPushNotificationConfig: { url: PUSH_URL, token: "notify-secret" } },
});
const respond = (taskId: string, body: Record<string, unknown>) => answerParams(taskId, { data: { type: HITL_RESPONSE_TYPE, ...body } });

async function finished(taskId: string) {
  return (await eventually(
    () => harness.outbound.pushes.find((p) => p.body.task?.id === taskId),
    (p) => p !== undefined,
    "the terminal push",
  ))!.body.task;
}

const notesOf = (key: string) =>
  runInDurableObject(objectOf(key), (_i, state) =>
    state.storage.sql
      .exec<{ text: string }>("SELECT text FROM notes_items")
      .toArray()
      .map((r) => r.text),
  );

describe("tool approval", () => {
  it("parks the task with the request (data and text parts), announces it, and runs the tool once approved", async () => {
    noteTaker();
    const caller = newCaller();
    const { task, waiting, request } = await parked(caller, "remember to buy milk");
    expect(request).toMatchObject({ requestKind: "approval", options: [{ id: "approve" }, { id: "reject" }] });
    expect(request.prompt).toBe(assistantPolicy.hitl.approvalPrompt({ toolName: "save_note", input: { text: "buy milk" } }));
    expect(Date.parse(request.expiresAt)).toBeGreaterThan(Date.now());
    expect(waiting.status.message.parts[0].text).toBe(
      assistantPolicy.hitl.requestText({ requestKind: "approval", prompt: request.prompt, options: request.options }),
    );
    await eventually(
      () => harness.outbound.pushes.find((p) => p.body.statusUpdate?.status?.state === "TASK_STATE_INPUT_REQUIRED"),
      (p) => p !== undefined,
      "the input-required push",
    );
    expect(await notesOf(caller.identity.key)).toEqual([]);

    const answered = await call("SendMessage", respond(task.id, { requestId: request.requestId, optionId: "approve" }), { mint: caller });
    expect(answered.body.result.task.status.state).toBe("TASK_STATE_WORKING");
    const done = await finished(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(await notesOf(caller.identity.key)).toEqual(["buy milk"]);
    // The answer is the task's history too, after the question.
    expect(done.history.map((m: { role: string }) => m.role)).toEqual(["ROLE_USER", "ROLE_AGENT", "ROLE_USER", "ROLE_AGENT"]);
  });

  it("a rejection is told to the model in the agent's words, the tool does not run, and the turn completes", async () => {
    noteTaker();
    const caller = newCaller();
    const { task, request } = await parked(caller, "note it");
    await call("SendMessage", respond(task.id, { requestId: request.requestId, optionId: "reject" }), { mint: caller });
    const done = await finished(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(await notesOf(caller.identity.key)).toEqual([]);
    expect(JSON.stringify(harness.outbound.modelCalls.at(-1)!.messages)).toContain(JSON.stringify(assistantPolicy.hitl.denied).slice(1, -1));
  });

  it("refuses plain text and unknown options for an approval with -32602, leaving the request open", async () => {
    noteTaker();
    const caller = newCaller();
    const { task, request } = await parked(caller, "note it");
    expect((await call("SendMessage", answerParams(task.id, { text: "yes please" }), { mint: caller })).body.error.code).toBe(-32602);
    expect((await call("SendMessage", respond(task.id, { requestId: request.requestId, optionId: "maybe" }), { mint: caller })).body.error.code).toBe(-32602);
    expect((await call("GetTask", { id: task.id }, { mint: caller })).body.result.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  });

  it("takes the first of concurrent answers; the others get the task as it is; the tool runs at most once", async () => {
    noteTaker();
    const caller = newCaller();
    const { task, request } = await parked(caller, "note it");
    const replies = await Promise.all(
      ["approve", "reject", "approve", "reject", "approve"].map((optionId) =>
        call("SendMessage", respond(task.id, { requestId: request.requestId, optionId }), { mint: caller }),
      ),
    );
    for (const reply of replies) expect(reply.body.error).toBeUndefined();
    await finished(task.id);
    const notes = await notesOf(caller.identity.key);
    expect(notes.length).toBeLessThanOrEqual(1);
    // A late repeat of the answer: the task at once, nothing new.
    const late = await call("SendMessage", respond(task.id, { requestId: request.requestId, optionId: "approve" }), { mint: caller });
    expect(late.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("a repeat of an answer already taken, sent blocking, returns the task at once while the turn goes on", async () => {
    const caller = newCaller();
    asker();
    const { task, request } = await parked(caller, "ask me");
    const first = await call("SendMessage", respond(task.id, { requestId: request.requestId, text: "Paris" }), { mint: caller });
    expect(first.body.result.task.status.state).toBe("TASK_STATE_WORKING");
    // The resumed turn's model call is held: a repeat that waited for the turn would never come back.
    const held = holdModel(harness.outbound);
    const { configuration: _immediate, ...blocking } = respond(task.id, { requestId: request.requestId, text: "Lyon" });
    const repeat = await call("SendMessage", blocking, { mint: caller });
    expect(repeat.body.result.task.id).toBe(task.id);
    expect(repeat.body.result.task.status.state).toBe("TASK_STATE_WORKING");
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the resumed model call",
    );
    held[0]!.release("Paris it is");
    expect((await finished(task.id)).status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("an expired approval is denied: the task goes back to working with the timeout announced, and the turn completes", async () => {
    noteTaker();
    const caller = newCaller();
    const { task, request } = await parked(caller, "note it");
    // The request's expiry, as the object's alarm fires it at expiresAt.
    await runInDurableObject(objectOf(caller.identity.key), (instance) =>
      (instance as unknown as { expireRequest(p: { requestId: string }): Promise<void> }).expireRequest({ requestId: request.requestId }),
    );
    const timeout = await eventually(
      () =>
        harness.outbound.pushes.find((p) =>
          p.body.statusUpdate?.status?.message?.parts?.some((part: { data?: { type?: string } }) => part.data?.type === HITL_TIMEOUT_TYPE),
        ),
      (p) => p !== undefined,
      "the timeout status update",
    );
    expect(timeout!.body.statusUpdate.status.state).toBe("TASK_STATE_WORKING");
    expect(timeout!.body.statusUpdate.status.message.parts[1].data.requestId).toBe(request.requestId);
    const done = await finished(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(await notesOf(caller.identity.key)).toEqual([]);
    expect(JSON.stringify(harness.outbound.modelCalls.at(-1)!.messages)).toContain(JSON.stringify(assistantPolicy.hitl.expired).slice(1, -1));
    // An answer after the expiry changes nothing.
    expect((await call("SendMessage", respond(task.id, { requestId: request.requestId, optionId: "approve" }), { mint: caller })).body.result.task.id).toBe(
      task.id,
    );
  });

  it("loses nothing when the caller's object is evicted while the task waits", async () => {
    noteTaker();
    const caller = newCaller();
    const { task, request } = await parked(caller, "note it");
    await evictDurableObject(objectOf(caller.identity.key));
    await call("SendMessage", respond(task.id, { requestId: request.requestId, optionId: "approve" }), { mint: caller });
    expect((await finished(task.id)).status.state).toBe("TASK_STATE_COMPLETED");
    expect(await notesOf(caller.identity.key)).toEqual(["buy milk"]);
  });

  it("a wake that did not arrive is sent again by the reconcile pass, and the turn goes on", async () => {
    noteTaker();
    const caller = newCaller();
    const stub = objectOf(caller.identity.key);
    const { task, request } = await parked(caller, "note it");
    // The Workflows API fails every event for a while (an outage): the answer is taken, its wake is lost.
    await runInDurableObject(stub, (instance) => {
      const real = env.TURN_WORKFLOW;
      Object.defineProperty(instance, "turnWorkflow", {
        configurable: true,
        value: () => ({
          ...real,
          create: real.create.bind(real),
          get: async (id: string) => ({ ...(await real.get(id)), sendEvent: () => Promise.reject(new Error("workflows are down")) }),
        }),
      });
    });
    await call("SendMessage", respond(task.id, { requestId: request.requestId, optionId: "approve" }), { mint: caller });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(harness.outbound.pushes.find((p) => p.body.task?.id === task.id)).toBeUndefined();

    await runInDurableObject(stub, (instance) => void delete (instance as { turnWorkflow?: unknown }).turnWorkflow);
    await reconcileNow(stub);
    expect((await finished(task.id)).status.state).toBe("TASK_STATE_COMPLETED");
    expect(await notesOf(caller.identity.key)).toEqual(["buy milk"]);
  });
});

describe("ask_user", () => {
  it("a question is answered with plain text, which the model then reads", async () => {
    asker();
    const caller = newCaller();
    const { task, request } = await parked(caller, "what's the weather in Paris?");
    expect(request).toMatchObject({ requestKind: "question", prompt: "Which city do you mean?" });
    await call("SendMessage", answerParams(task.id, { text: "Paris, Texas" }), { mint: caller });
    const done = await finished(task.id);
    expect(done.artifacts[0].parts[0].text).toContain("Paris, Texas");
  });

  it("choices are answered by optionId; the model sees the choice", async () => {
    asker([
      { id: "fr", label: "Paris, France" },
      { id: "tx", label: "Paris, Texas" },
    ]);
    const caller = newCaller();
    const { task, request } = await parked(caller, "weather in Paris?");
    expect(request).toMatchObject({ requestKind: "choice", options: [{ id: "fr" }, { id: "tx" }] });
    expect((await call("SendMessage", answerParams(task.id, { text: "the French one" }), { mint: caller })).body.error.code).toBe(-32602);
    await call("SendMessage", respond(task.id, { requestId: request.requestId, optionId: "fr" }), { mint: caller });
    expect((await finished(task.id)).artifacts[0].parts[0].text).toContain("Paris, France");
  });
});

describe("multi-turn rules", () => {
  it("refuses a message naming a task as the contract lists", async () => {
    const caller = newCaller();
    // Unknown, and another caller's: TaskNotFound alike.
    expect((await call("SendMessage", answerParams("no-such-task", { text: "hi" }), { mint: caller })).body.error.code).toBe(-32001);
    harness.outbound.model = async (c) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return chatCompletion("slow", c.model);
    };
    const mine = (await call("SendMessage", sendParams("working on it"), { mint: caller })).body.result.task;
    expect((await call("SendMessage", answerParams(mine.id, { text: "hi" }), { mint: newCaller() })).body.error.code).toBe(-32001);
    // Another context: invalid params.
    expect((await call("SendMessage", answerParams(mine.id, { text: "hi" }, "another-context"), { mint: caller })).body.error.code).toBe(-32602);
    // Busy (submitted or working): -32004 naming its state.
    const busy = await call("SendMessage", answerParams(mine.id, { text: "hi" }), { mint: caller });
    expect(busy.body.error).toMatchObject({ code: -32004, data: [{ metadata: { taskState: expect.stringMatching(/TASK_STATE_(SUBMITTED|WORKING)/) } }] });
    // Terminal: -32004.
    await finished(mine.id);
    const ended = await call("SendMessage", answerParams(mine.id, { text: "hi" }), { mint: caller });
    expect(ended.body.error).toMatchObject({ code: -32004, data: [{ metadata: { taskState: "TASK_STATE_COMPLETED" } }] });
  });
});
