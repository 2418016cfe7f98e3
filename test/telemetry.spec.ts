import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE, USAGE_KEY } from "@dynamicagents/core/a2a";
import type { AgentEvent, EventCatalogue, EventLine, EventName } from "@dynamicagents/core/telemetry";
import type { TurnObject } from "@dynamicagents/core/boundary";
import { callerObjectName } from "@dynamicagents/core/worker";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { observed } from "./support/agents.js";
import { captureConsole, type CapturedConsole } from "./support/console-capture.js";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";
import { useMarkerHarness } from "./support/turn-harness.js";
import { driven, openTurnOf, type DrivenObject } from "./support/turns.js";

// The event catalogue (docs/telemetry.md) as an operator reads it: each
// event once per occurrence, with its documented fields and scope, nothing
// secret in any line, and the same id when a step is replayed.

const harness = useMarkerHarness();
const edge = markerEdge();
const CANARY_TEXT = "canary-text-telemetry-4417";
const SECRET = env.OBSERVED_SECRET!;

const newCaller = () => ({ tenant: "observed", identity: { key: `caller-${crypto.randomUUID()}`, name: "Ada" } });
type Caller = ReturnType<typeof newCaller>;
const objectOf = (caller: Caller) =>
  env.MARKER_OBSERVED!.get(env.MARKER_OBSERVED!.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "observed", key: caller.identity.key })));

/** Every line written to the log while a spec runs (still printed: the run's canary check reads them too). */
let captured: CapturedConsole;
beforeEach(() => {
  captured = captureConsole();
  observed.events.length = 0;
});
afterEach(() => captured[Symbol.dispose]());

const eventsIn = (taskId?: string): AgentEvent[] => captured.events().filter((event) => taskId === undefined || event.taskId === taskId);
/** The events of one name, typed as the catalogue says (a plugin's own by its full name). */
function named<N extends EventName>(events: AgentEvent[], name: N): EventLine<N, EventCatalogue[N]>[];
function named(events: AgentEvent[], name: string): AgentEvent[];
function named(events: AgentEvent[], name: string): AgentEvent[] {
  return events.filter((event) => event.event === name);
}

const toolMessages = (c: ModelCall) => c.messages.filter((m) => m.role === "tool");

async function send(caller: Caller, text: string, pushUrl = PUSH_URL) {
  const reply = await call("SendMessage", sendParams(text, undefined, pushUrl), { mint: caller, worker: edge.fetch });
  expect(reply.body.error).toBeUndefined();
  return reply.body.result.task as { id: string; contextId: string };
}

async function finished(taskId: string) {
  return (await eventually(
    () => harness.outbound.pushes.find((p) => p.body.task?.id === taskId),
    (p) => p !== undefined,
    "the terminal push",
  ))!.body.task;
}

/** Waits until the turn's Workflow ran its last step (its last events are out). */
async function settled(taskId: string, last = "turn.finished") {
  await finished(taskId);
  return eventually(
    () => eventsIn(taskId),
    (events) => named(events, last).length > 0 && named(events, "push.attempt").length > 0,
    `the events of ${taskId}`,
  );
}

/** The instance id of the task's turn, as its `turn.started` event names it: what the Workflow's calls pass. */
async function turnOf(taskId: string): Promise<string> {
  const started = await eventually(
    () => named(eventsIn(taskId), "turn.started")[0],
    (event) => event !== undefined,
    `the turn of ${taskId}`,
  );
  return started!.data.instanceId;
}

function expectNothingSecret(caller: Caller) {
  for (const line of captured.lines()) {
    expect(line).not.toContain(SECRET);
    expect(line).not.toContain(CANARY_TEXT);
    expect(line).not.toContain(caller.identity.key);
    expect(line).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
  }
}

describe("a turn with a tool", () => {
  it("emits each event once, with its fields and scope, a caller hash instead of the identity, and nothing secret", async () => {
    harness.outbound.model = (c) => (toolMessages(c).length === 0 ? chatToolCall("read_secret", {}, c.model) : chatCompletion("done", c.model));
    const caller = newCaller();
    const task = await send(caller, `please ${CANARY_TEXT}`);
    const events = await settled(task.id);

    const order = events.map((e) => e.event);
    expect(order.slice(0, 2)).toEqual(["task.accepted", "turn.started"]);
    for (const name of ["task.accepted", "turn.started", "tool.call", "round.finished", "turn.finished", "plugin.observing.secret_read"]) {
      expect(named(events, name), name).toHaveLength(1);
    }
    // Two model exchanges? No: one exchange, two steps (the tool round trip happens inside it).
    const [model] = named(events, "model.call");
    expect(named(events, "model.call")).toHaveLength(1);
    expect(model!.data).toMatchObject({
      round: 1,
      model: "openai-compatible:primary-model",
      fallback: false,
      retries: 0,
      outcome: "ok",
      steps: 2,
      inputTokens: 2,
      outputTokens: 2,
    });
    expect(named(events, "tool.call")[0]!.data).toMatchObject({ round: 1, tool: "read_secret", outcome: "ok", redacted: true });
    expect(named(events, "turn.finished")[0]!.data).toMatchObject({ state: "TASK_STATE_COMPLETED", inputTokens: 2, outputTokens: 2, modelCalls: 1 });
    expect(named(events, "push.attempt")[0]!.data).toMatchObject({ seq: expect.any(Number), attempt: 1, status: 200, outcome: "delivered" });

    // One scope for the whole task: tenant, a 128-bit caller hash, the task, its context, its turn.
    const callerHash = events[0]!.caller;
    expect(callerHash).toMatch(/^[0-9a-f]{32}$/);
    for (const event of events) {
      expect(event).toMatchObject({ type: "dynamicagents.event", v: 1, tenant: "observed", caller: callerHash, taskId: task.id, contextId: task.contextId });
      expect(event.eventId).toMatch(/^[0-9a-f]{32}$/);
      expect(Date.parse(event.at)).not.toBeNaN();
      expect(event.turnId, event.event).toBeTruthy();
    }
    // The turn's calls name the turn they run in, from their own read of it: one instance for every event, the accept's too.
    expect(new Set(events.map((e) => e.turnId)).size).toBe(1);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);

    // The plugin's own event quoted the secret: scrubbed. It heard every event the object emitted.
    expect(named(events, "plugin.observing.secret_read")[0]!.data).toEqual({ length: SECRET.length, quoted: "[redacted]" });
    const heard = observed.events.filter((e) => e.taskId === task.id).map((e) => e.eventId);
    const fromObject = events.filter((e) => e.event !== "push.attempt").map((e) => e.eventId);
    expect(heard.sort()).toEqual(fromObject.sort());
    expectNothingSecret(caller);
  });

  it("another caller of the same tenant has another hash; the same caller keeps its hash", async () => {
    const [a, b] = [newCaller(), newCaller()];
    const first = await send(a, "one");
    const second = await send(a, "two");
    const third = await send(b, "three");
    const hashOf = async (taskId: string) => (await settled(taskId))[0]!.caller;
    expect(await hashOf(first.id)).toBe(await hashOf(second.id));
    expect(await hashOf(first.id)).not.toBe(await hashOf(third.id));
  });

  it("the finished task carries its usage in metadata", async () => {
    const caller = newCaller();
    const task = await send(caller, "count me");
    const done = await finished(task.id);
    expect(done.metadata?.[USAGE_KEY], JSON.stringify(done)).toEqual({ inputTokens: 1, outputTokens: 1, modelCalls: 1 });
  });
});

describe("replays", () => {
  it("a replayed step (start, run, save) emits nothing new, and a re-run push attempt keeps its id", async () => {
    const caller = newCaller();
    const task = await send(caller, "once");
    const events = await settled(task.id);
    const before = events.map((e) => e.eventId);
    const instanceId = await turnOf(task.id);
    // The Workflow's steps again, as a retry after a crash would call them.
    await runInDurableObject(objectOf(caller), async (object: TurnObject) => {
      const instance: DrivenObject = driven(object);
      await instance.turnStarted(task.id, "https://agents.test");
      await instance.runTurn(task.id, "https://agents.test", 1, instanceId);
      await instance.finishTurn(task.id);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(eventsIn(task.id).map((e) => e.eventId)).toEqual(before);
  });
});

describe("a round step retried after its decision", () => {
  it("reports the round once: the re-run finds the decision recorded and says nothing again", async () => {
    // The spec drives the turn's steps itself, as a Workflow retrying its round step would.
    await harness.workflows.modifyAll(async (m) => m.mockStepError({ name: "run" }, new Error("the spec drives this turn")));
    harness.outbound.model = (c) =>
      c.tools.includes("delegate") && !c.messages.some((m) => String(m.content).includes("said"))
        ? chatToolCall("delegate", { subtasks: [{ type: "echo_task", params: { say: "part 1" } }] }, c.model)
        : chatCompletion("all done", c.model);
    const caller = { ...newCaller(), tenant: "marker-researcher" };
    const task = await send(caller, "research it once");
    const stub = env.MARKER_RESEARCHER!.get(
      env.MARKER_RESEARCHER!.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "marker-researcher", key: caller.identity.key })),
    );
    const agent: TurnObject = stub;
    // Its run step never ran, so no event names the instance yet: the object's record does.
    const instanceId = await openTurnOf(stub, task.id);
    const first = await agent.runTurn(task.id, "https://agents.test", 1, instanceId);
    expect(first).toMatchObject({ ok: true, value: { kind: "continue" } });
    expect(await agent.runTurn(task.id, "https://agents.test", 1, instanceId)).toEqual(first);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(named(eventsIn(task.id), "round.finished").map((e) => e.data)).toEqual([{ round: 1, outcome: "delegated", durationMs: expect.any(Number) }]);
  });
});

describe("the model", () => {
  it("a transient error is retried and a failing primary falls back: one model.call says both", async () => {
    let primary = 0;
    harness.outbound.model = (c) => {
      if (c.model === "primary-model") {
        primary++;
        return new Response("busy", { status: 503 });
      }
      return chatCompletion("from the fallback", c.model);
    };
    const caller = newCaller();
    const task = await send(caller, "fall back");
    const events = await settled(task.id);
    const calls = named(events, "model.call");
    expect(calls).toHaveLength(1);
    expect(calls[0]!.data).toMatchObject({ model: "openai-compatible:fallback-model", fallback: true, outcome: "ok" });
    // The primary's requests (first try and its retries) are counted as retries past the first request.
    expect(calls[0]!.data).toMatchObject({ retries: primary });
  });
});

describe("human in the loop", () => {
  it("asked and answered are events; the answer's text is not", async () => {
    harness.outbound.model = (c) =>
      toolMessages(c).length === 0 ? chatToolCall("ask_user", { question: "Which city?" }, c.model) : chatCompletion("noted", c.model);
    const caller = newCaller();
    const task = await send(caller, "ask me");
    const waiting = await eventually(
      async () => (await call("GetTask", { id: task.id }, { mint: caller, worker: edge.fetch })).body.result,
      (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED",
      "the task to wait",
    );
    const request = waiting.status.message.parts.find((p: { data?: { type?: string } }) => p.data?.type === HITL_REQUEST_TYPE).data;
    const answer = {
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        taskId: task.id,
        parts: [{ data: { type: HITL_RESPONSE_TYPE, requestId: request.requestId, text: CANARY_TEXT } }],
      },
      configuration: { returnImmediately: true },
    };
    expect((await call("SendMessage", answer, { mint: caller, worker: edge.fetch })).body.error).toBeUndefined();
    const events = await settled(task.id);
    expect(named(events, "hitl.asked")).toHaveLength(1);
    expect(named(events, "hitl.asked")[0]!.data).toMatchObject({ requestId: request.requestId, requestKind: "question", expiresAt: request.expiresAt });
    expect(named(events, "hitl.answered")).toHaveLength(1);
    expect(named(events, "hitl.answered")[0]!.data).toMatchObject({ requestId: request.requestId, outcome: "answered" });
    expect(named(events, "task.continued")).toHaveLength(1);
    expectNothingSecret(caller);
  });
});

describe("deliveries", () => {
  it("a refused push is a dead letter, and its re-delivery is an event too", async () => {
    const refusing = `${GATEKEEPER}/hooks/refusing`;
    const later = `${GATEKEEPER}/hooks/later`;
    harness.outbound.pushReplies.set(refusing, () => new Response(null, { status: 404 }));
    const caller = newCaller();
    const task = await send(caller, "deliver me", refusing);
    await eventually(
      () => named(eventsIn(task.id), "push.dead_lettered"),
      (found) => found.length > 0,
      "the dead letter event",
    );
    const attempt = named(eventsIn(task.id), "push.attempt")[0]!;
    expect(attempt.data).toMatchObject({ status: 404, outcome: "permanent", attempt: 1 });
    expect(named(eventsIn(task.id), "push.dead_lettered")[0]!.data).toMatchObject({ status: 404, seq: attempt.data.seq, configId: attempt.data.configId });

    const set = await call("CreateTaskPushNotificationConfig", { taskId: task.id, url: later, token: "t-2" }, { mint: caller, worker: edge.fetch });
    expect(set.body.error).toBeUndefined();
    const redelivered = await eventually(
      () => named(eventsIn(task.id), "push.redelivered"),
      (found) => found.length > 0,
      "the re-delivery event",
    );
    expect(redelivered).toHaveLength(1);
    expect(redelivered[0]!.data).toMatchObject({ configId: set.body.result.id, delivered: 1, givenUp: 0 });
  });
});

describe("the daily token budget", () => {
  it("a caller past it is refused with 429 QUOTA_EXCEEDED: nothing created, no model call; another caller is not", async () => {
    const caller = newCaller();
    for (const text of ["one", "two", "three"]) await finished((await send(caller, text)).id);
    const modelCallsBefore = harness.outbound.modelCalls.length;
    const refused = await call("SendMessage", sendParams("four"), { mint: caller, worker: edge.fetch });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(refused.body.error.code).toBe(-32000);
    expect(refused.body.error.data[0]).toMatchObject({ reason: "QUOTA_EXCEEDED", domain: "dynamicagents.dev", metadata: { limit: "tokensPerCallerPerDay" } });
    const listed = await call("ListTasks", {}, { mint: caller, worker: edge.fetch });
    expect(listed.body.result.tasks).toHaveLength(3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(harness.outbound.modelCalls.length).toBe(modelCallsBefore);
    expect(named(eventsIn(), "quota.exceeded").map((e) => e.data)).toContainEqual({ limit: "tokensPerCallerPerDay", retryAfterSeconds: expect.any(Number) });
    // The budget is per caller.
    expect((await call("SendMessage", sendParams("mine"), { mint: newCaller(), worker: edge.fetch })).body.error).toBeUndefined();
  });
});

describe("a round with subtasks", () => {
  it("each round and each subtask is an event, once", async () => {
    harness.outbound.model = (c) =>
      c.tools.includes("delegate") && !c.messages.some((m) => String(m.content).includes("said"))
        ? chatToolCall("delegate", { subtasks: [1, 2].map((n) => ({ type: "echo_task", params: { say: `part ${n}` } })) }, c.model)
        : chatCompletion("all done", c.model);
    const caller = { ...newCaller(), tenant: "marker-researcher" };
    const task = await send(caller, "research it");
    const events = await settled(task.id);
    expect(named(events, "round.finished").map((e) => e.data)).toEqual([
      { round: 1, outcome: "delegated", durationMs: expect.any(Number) },
      { round: 2, outcome: "answer", durationMs: expect.any(Number) },
    ]);
    const started = named(events, "subtask.started");
    const ended = named(events, "subtask.finished");
    expect(started).toHaveLength(2);
    expect(ended).toHaveLength(2);
    expect(new Set(ended.map((e) => (e.data as { subtaskId: string }).subtaskId))).toEqual(
      new Set(started.map((e) => (e.data as { subtaskId: string }).subtaskId)),
    );
    for (const event of ended) expect(event.data).toMatchObject({ round: 1, type: "echo_task", outcome: "done" });
    expect(named(events, "model.call")).toHaveLength(2);
    expect(named(events, "turn.finished")).toHaveLength(1);
  });
});
