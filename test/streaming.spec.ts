import { env } from "cloudflare:workers";
import { EVENT_SEQ_HEADER } from "@dynamicagents/core/a2a";
import type { CallerObject, TurnObject } from "@dynamicagents/core/boundary";
import { describe, expect, it } from "vitest";
import { markerEdge } from "./support/isolated-edge.js";
import { useMarkerHarness } from "./support/turn-harness.js";
import { chatCompletion, chatToolCall, eventually, holdModel } from "./support/outbound.js";
import { call, drain, openStream, userMessage } from "./support/rpc.js";
import { ORIGIN } from "./support/constants.js";

// Streams (docs/protocol.md "Events, streams and pushes"): the snapshot, then
// every event in seq order, closed by the first event that ends the task or
// interrupts it; any connection to the caller's object sees the same events.
// The local pool runs every connection in one isolate: that a second isolate
// sees them too is the Durable Object's doing and is not proven here.

const harness = useMarkerHarness();

const edge = markerEdge();
const newCaller = () => ({ tenant: "marker", identity: { key: `caller-${crypto.randomUUID()}` } });
type Caller = ReturnType<typeof newCaller>;
const rpc = (method: string, params: Record<string, unknown>, mint: Caller) => call(method, params, { worker: edge.fetch, mint });
const stream = (method: string, params: Record<string, unknown>, mint: Caller, headers?: Record<string, string>) =>
  openStream(method, params, { worker: edge.fetch, mint, ...(headers ? { headers } : {}) });

const stateOf = (result: any) => result.task?.status?.state ?? result.statusUpdate?.status?.state;
const send = (text: string) => ({ message: userMessage(text) });

describe("SendStreamingMessage", () => {
  it("streams the snapshot, then each status change in seq order, and closes at the terminal one", async () => {
    const events = await drain(await stream("SendStreamingMessage", send("hi"), newCaller()));
    expect(events[0]!.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
    expect(events.map((e) => stateOf(e.result)).filter(Boolean)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids.slice(1)).size).toBe(ids.length - 1);
    // The answer is in the stream before it ends.
    const completed = events.at(-1)!.result.statusUpdate;
    expect(completed.status.message.parts[0].text).toBe("echo: hi");
  });

  it("streams the answer as artifact chunks as the model writes it, the last one marked", async () => {
    harness.outbound.model = (c) => chatCompletion("one two three four five six seven", c.model);
    const events = await drain(await stream("SendStreamingMessage", send("words"), newCaller()));
    const chunks = events.map((e) => e.result.artifactUpdate).filter(Boolean);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks[0].append).toBe(false);
    expect(chunks.slice(1).every((c: { append: boolean }) => c.append)).toBe(true);
    expect(chunks.at(-1).lastChunk).toBe(true);
    expect(chunks.map((c: { artifact: { parts: Array<{ text: string }> } }) => c.artifact.parts.map((p) => p.text).join("")).join("")).toBe(
      "one two three four five six seven",
    );
    // All of them before the task is completed.
    const done = events.findIndex((e) => stateOf(e.result) === "TASK_STATE_COMPLETED");
    expect(events.findLastIndex((e) => e.result.artifactUpdate)).toBeLessThan(done);
  });

  it("a refusal before the stream is a plain JSON-RPC error", async () => {
    const refused = await stream("SendStreamingMessage", { message: { ...userMessage("x"), role: "ROLE_AGENT" } }, newCaller());
    expect(refused.reply?.error?.code).toBe(-32602);
  });
});

describe("SubscribeToTask", () => {
  it("another connection sees the same live events, from its snapshot on", async () => {
    const held = holdModel(harness.outbound);
    const caller = newCaller();
    const task = (await rpc("SendMessage", { ...send("slow"), configuration: { returnImmediately: true } }, caller)).body.result.task;
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    const subscription = await stream("SubscribeToTask", { id: task.id }, caller);
    held[0]!.release("late answer");
    const events = await drain(subscription);
    expect(events[0]!.result.task.status.state).toBe("TASK_STATE_WORKING");
    expect(stateOf(events.at(-1)!.result)).toBe("TASK_STATE_COMPLETED");
    expect(events.at(-1)!.result.statusUpdate.status.message.parts[0].text).toBe("late answer");
  });

  it("with Last-Event-ID replays every later event, also of a finished task, then closes", async () => {
    const caller = newCaller();
    const all = await drain(await stream("SendStreamingMessage", send("replay me"), caller));
    const taskId = all[0]!.result.task.id;
    const fromStart = await drain(await stream("SubscribeToTask", { id: taskId }, caller, { "Last-Event-ID": "0" }));
    expect(fromStart[0]!.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    // The first stream's snapshot stood for event 1 (submitted); the replay sends it too.
    expect(fromStart.slice(1).map((e) => e.id)).toEqual(["1", ...all.slice(1).map((e) => e.id)]);
    const fromTwo = await drain(await stream("SubscribeToTask", { id: taskId }, caller, { "Last-Event-ID": "2" }));
    expect(fromTwo.slice(1).every((e) => Number(e.id) > 2)).toBe(true);
    expect(
      fromTwo
        .slice(1)
        .map((e) => stateOf(e.result))
        .filter(Boolean),
    ).toEqual(["TASK_STATE_COMPLETED"]);
    // Without the header a finished task has nothing to follow.
    const refused = await stream("SubscribeToTask", { id: taskId }, caller);
    expect(refused.reply?.error?.code).toBe(-32004);
    const bad = await stream("SubscribeToTask", { id: taskId }, caller, { "Last-Event-ID": "soon" });
    expect(bad.reply?.error?.code).toBe(-32602);
  });

  it("is refused past the caller's cap on open streams, and a dropped one frees its place", async () => {
    const held = holdModel(harness.outbound);
    const caller = newCaller();
    const task = (await rpc("SendMessage", { ...send("hold"), configuration: { returnImmediately: true } }, caller)).body.result.task;
    const first = await stream("SubscribeToTask", { id: task.id }, caller);
    const second = await stream("SubscribeToTask", { id: task.id }, caller);
    const third = await stream("SubscribeToTask", { id: task.id }, caller);
    expect(third.status).toBe(429);
    expect(third.reply?.error).toMatchObject({ code: -32000, data: [expect.objectContaining({ reason: "QUOTA_EXCEEDED" })] });
    await first.close();
    const again = await eventually(
      () => stream("SubscribeToTask", { id: task.id }, caller),
      (s) => s.status === 200 && s.reply === undefined,
      "a place to free up",
    );
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    held[0]!.release();
    expect(stateOf((await drain(again)).at(-1)!.result)).toBe("TASK_STATE_COMPLETED");
    await second.close();
  });

  it("a streaming send past the cap is refused before its task exists", async () => {
    const held = holdModel(harness.outbound);
    const caller = newCaller();
    const task = (await rpc("SendMessage", { ...send("hold"), configuration: { returnImmediately: true } }, caller)).body.result.task;
    const open = [await stream("SubscribeToTask", { id: task.id }, caller), await stream("SubscribeToTask", { id: task.id }, caller)];
    const refused = await stream("SendStreamingMessage", send("one more"), caller);
    expect(refused.status).toBe(429);
    expect(refused.reply?.error).toMatchObject({ code: -32000, data: [expect.objectContaining({ reason: "QUOTA_EXCEEDED" })] });
    const listed = (await rpc("ListTasks", {}, caller)).body.result;
    expect(listed.tasks.map((t: { id: string }) => t.id)).toEqual([task.id]);
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    held[0]!.release();
    for (const s of open) await drain(s);
  });
});

describe("events and pushes", () => {
  it("a push carries its event's seq, the same as the stream's id for that event", async () => {
    const caller = newCaller();
    const events = await drain(
      await stream(
        "SendStreamingMessage",
        { message: userMessage("pushed"), configuration: { taskPushNotificationConfig: { url: "https://gatekeeper.test/a2a/notifications" } } },
        caller,
      ),
    );
    const taskId = events[0]!.result.task.id;
    const push = await eventually(
      () => harness.outbound.pushes.find((p) => p.body.task?.id === taskId),
      (p) => p !== undefined,
      "the terminal push",
    );
    expect(push!.headers.get(EVENT_SEQ_HEADER)).toBe(events.at(-1)!.id);
    // A config without a token: no notification-token header.
    expect(push!.headers.has("x-a2a-notification-token")).toBe(false);
  });

  it("a waiting task's stream closes at input-required; a subscription to it stays open through the answer", async () => {
    harness.outbound.model = (c) =>
      c.messages.some((m) => m.role === "tool") ? chatCompletion("thanks", c.model) : chatToolCall("ask_user", { question: "Which?" }, c.model);
    const caller = newCaller();
    const sent = await drain(await stream("SendStreamingMessage", send("ask me"), caller));
    expect(stateOf(sent.at(-1)!.result)).toBe("TASK_STATE_INPUT_REQUIRED");
    const taskId = sent[0]!.result.task.id;
    const subscription = await stream("SubscribeToTask", { id: taskId }, caller);
    await rpc("SendMessage", { message: userMessage("the first", undefined, { taskId }), configuration: { returnImmediately: true } }, caller);
    const events = await drain(subscription);
    expect(events[0]!.result.task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(
      events
        .slice(1)
        .map((e) => stateOf(e.result))
        .filter(Boolean),
    ).toEqual(["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
  });
});

// A model call streams only when a stream reads the answer as it is written
// (docs/protocol.md "Events, streams and pushes"); otherwise it is one
// request, and the answer is still one artifact chunk in the task's events.
describe("the model streams for a reader", () => {
  const chunksOf = (events: Array<{ result: any }>) => events.map((e) => e.result.artifactUpdate).filter(Boolean);
  const askedStreamed = () => harness.outbound.modelCalls.map((c) => c.stream);

  it("a turn nobody follows asks in one request, and its answer is still one last chunk among the task's events", async () => {
    harness.outbound.model = (c) => chatCompletion("one two three", c.model);
    const caller = newCaller();
    // A blocking send waits for the end: it does not read the answer as it is written.
    const task = (await rpc("SendMessage", send("quiet"), caller)).body.result.task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(askedStreamed()).toEqual([false]);
    const replayed = await drain(await stream("SubscribeToTask", { id: task.id }, caller, { "Last-Event-ID": "0" }));
    const chunks = chunksOf(replayed);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ append: false, lastChunk: true, artifact: { parts: [{ text: "one two three" }] } });
  });

  it("a streaming send's turn streams, its stream being on its way when the turn starts", async () => {
    harness.outbound.model = (c) => chatCompletion("streamed words", c.model);
    const events = await drain(await stream("SendStreamingMessage", send("loud"), newCaller()));
    expect(askedStreamed()).toEqual([true]);
    expect(chunksOf(events).at(-1)?.lastChunk).toBe(true);
  });

  it("a streaming send's stream counts from its accept: a turn run before the stream opens streams too", async () => {
    // Through the boundary, as the edge and the Workflow call it, with the stream never opened.
    const agent: CallerObject & TurnObject = env.MARKER_AGENT!.get(env.MARKER_AGENT!.idFromName(crypto.randomUUID()));
    const begin = (stream: boolean) =>
      agent.beginTask({ tenant: "marker", origin: ORIGIN, message: userMessage("early"), ...(stream ? { stream: true as const } : {}) });
    for (const streaming of [true, false]) {
      const begun = await begin(streaming);
      if (!begun.ok) throw new Error(begun.error.message);
      const accepted = begun.value;
      if ("message" in accepted) throw new Error("the agent answered with a message, not a task");
      expect(accepted.streamSlot !== undefined).toBe(streaming);
      if (!accepted.turn) throw new Error("a new task names its turn");
      expect((await agent.runTurn(accepted.task.id, ORIGIN, 1, accepted.turn.instanceId)).ok).toBe(true);
    }
    expect(askedStreamed()).toEqual([true, false]);
  });

  it("a subscription open when the model is asked makes it stream; once it closed, the next turn does not", async () => {
    harness.outbound.model = (c) =>
      c.messages.some((m) => m.role === "tool") ? chatCompletion("thanks", c.model) : chatToolCall("ask_user", { question: "Which?" }, c.model);
    const caller = newCaller();
    const task = (await rpc("SendMessage", send("ask me"), caller)).body.result.task;
    expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const subscription = await stream("SubscribeToTask", { id: task.id }, caller);
    await rpc("SendMessage", { message: userMessage("the first", undefined, { taskId: task.id }), configuration: { returnImmediately: true } }, caller);
    const events = await drain(subscription);
    expect(stateOf(events.at(-1)!.result)).toBe("TASK_STATE_COMPLETED");
    // Asked first with nobody reading, then again with the subscription open.
    expect(askedStreamed()).toEqual([false, true]);
    harness.outbound.model = (c) => chatCompletion("alone again", c.model);
    await rpc("SendMessage", send("after"), caller);
    expect(askedStreamed()).toEqual([false, true, false]);
  });
});
