import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { DEAD_LETTERS_KEY, EVENT_SEQ_HEADER, TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { AgentDB } from "@dynamicagents/core/db";
import { callerObjectName } from "@dynamicagents/core/worker";
import { afterEach, describe, expect, it, vi } from "vitest";
import { captureConsole, type CapturedConsole } from "./support/console-capture.js";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { reconcileNow } from "./support/reconcile.js";
import { call, sendParams } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

// A gatekeeper that is down holds nothing of its callers' (docs/gatekeeper.md
// "When your push endpoint is down"): a turn waiting for a human takes the
// answer while its request's push is retried, a later push supersedes one
// still pending, and tasks whose pushes are being retried count toward a cap
// of their own, not toward the turns in flight. The harness disables the
// Workflow's sleeps; a wait for an answer is a wait for an event, in real time.

const harness = useTurnHarness();
const newCaller = () => ({ identity: { key: `caller-${crypto.randomUUID()}`, name: "Ada" } });
type Caller = ReturnType<typeof newCaller>;
const objectOf = (caller: Caller) =>
  env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key })));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED";

let captured: CapturedConsole | undefined;
afterEach(() => {
  captured?.[Symbol.dispose]();
  captured = undefined;
  vi.restoreAllMocks();
});

/** One push as the gatekeeper received it (answered or not), in order of arrival. */
interface Arrival {
  taskId: string;
  seq: number;
  state: string;
  terminal: boolean;
  /** What the gatekeeper answered (0 until it did). */
  status: number;
}

/** The gatekeeper's push endpoint, answering each push as `answer` says (`n`: how many times this event arrived so far). */
function pushEndpoint(answer: (push: Arrival, n: number) => Response | Promise<Response>): Arrival[] {
  const arrivals: Arrival[] = [];
  harness.outbound.pushReplies.set(PUSH_URL, async (request) => {
    const body = (await request.json()) as { task?: { id: string; status: { state: string } }; statusUpdate?: { taskId: string; status: { state: string } } };
    const arrival: Arrival = {
      taskId: body.task?.id ?? body.statusUpdate?.taskId ?? "",
      seq: Number(request.headers.get(EVENT_SEQ_HEADER)),
      state: body.task?.status.state ?? body.statusUpdate?.status.state ?? "",
      terminal: body.task !== undefined,
      status: 0,
    };
    arrivals.push(arrival);
    const response = await answer(arrival, arrivals.filter((a) => a.taskId === arrival.taskId && a.seq === arrival.seq).length);
    arrival.status = response.status;
    return response;
  });
  return arrivals;
}

const answerOf = (status: number) => new Response(null, { status });
const toolMessages = (c: ModelCall) => c.messages.filter((m) => m.role === "tool");

/** A model that asks the user first, then answers with what they said. */
function asker() {
  harness.outbound.model = (c) =>
    toolMessages(c).length === 0
      ? chatToolCall("ask_user", { question: "Which city do you mean?" }, c.model)
      : chatCompletion(`you said: ${JSON.stringify(toolMessages(c).at(-1)?.content)}`, c.model);
}

async function send(caller: Caller, text: string) {
  const reply = await call("SendMessage", sendParams(text), { mint: caller });
  expect(reply.body.error).toBeUndefined();
  return reply.body.result.task as { id: string };
}

const answer = (caller: Caller, taskId: string, text: string) =>
  call(
    "SendMessage",
    {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", taskId, parts: [{ text }] },
      configuration: { returnImmediately: true },
    },
    { mint: caller },
  );

const taskOf = async (caller: Caller, taskId: string) => (await call("GetTask", { id: taskId }, { mint: caller })).body.result;

/** The task once its terminal push was taken. */
const delivered = (arrivals: Arrival[], taskId: string) =>
  eventually(
    () => arrivals.find((a) => a.taskId === taskId && a.terminal && a.status === 200),
    (found) => found !== undefined,
    `the terminal push of ${taskId}`,
  );

/** The caller's open turn records (the Workflows not done delivering). */
const openTurns = (caller: Caller) => runInDurableObject(objectOf(caller), (_i, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).turns.size);

/** The caps of the agent's `limits` configuration this spec sets lower. */
type Caps = { maxPendingQuestions?: number; maxPendingDeliveries?: number };

/** Sets some of the caller's limits as its agent's configuration would (in this instance of its object). */
async function limitsOf(caller: Caller, limits: Caps) {
  await runInDurableObject(objectOf(caller), (instance) => {
    const agent = instance as unknown as { lifecycleLimits(): Caps };
    const configured = agent.lifecycleLimits();
    Object.defineProperty(agent, "lifecycleLimits", { configurable: true, value: () => ({ ...configured, ...limits }) });
  });
}

describe("a turn waiting for a human", () => {
  it("takes an answer that comes while its request's push is retried: the turn completes before that push's next attempt", async () => {
    asker();
    const caller = newCaller();
    let answered = false;
    // The task's state at each attempt of the request's push after the first.
    const seen: string[] = [];
    const arrivals = pushEndpoint(async (push, n) => {
      if (push.state !== INPUT_REQUIRED) return answerOf(200);
      // The answer comes while the first attempt is still waiting for the gatekeeper, which then answers 503.
      if (n === 1) while (!answered) await pause(10);
      else seen.push((await taskOf(caller, push.taskId)).status.state);
      return answerOf(503);
    });
    const task = await send(caller, "what's the weather in Paris?");
    await eventually(
      () => arrivals.filter((a) => a.state === INPUT_REQUIRED),
      (asks) => asks.length === 1,
      "the request's push",
    );
    expect((await answer(caller, task.id, "Paris, France")).body.error).toBeUndefined();
    answered = true;
    await delivered(arrivals, task.id);
    expect((await taskOf(caller, task.id)).status.state).toBe("TASK_STATE_COMPLETED");
    // Its one later attempt came once the task had completed: the last before the terminal push.
    expect(seen).toEqual(["TASK_STATE_COMPLETED"]);
  });

  it("a request's push still retried when the terminal push is ready gets one more attempt, then is superseded, and never arrives after it", async () => {
    captured = captureConsole();
    asker();
    const caller = newCaller();
    const arrivals = pushEndpoint((push) => answerOf(push.state === INPUT_REQUIRED ? 503 : 200));
    const task = await send(caller, "which Paris?");
    await eventually(
      () => arrivals.some((a) => a.state === INPUT_REQUIRED),
      (found) => found,
      "the request's push",
    );
    expect((await answer(caller, task.id, "Paris, Texas")).body.error).toBeUndefined();
    await delivered(arrivals, task.id);
    // Past the time the schedule would have tried the request again: nothing of it follows the terminal push.
    await pause(2_500);
    const terminal = arrivals.findIndex((a) => a.terminal);
    expect(arrivals.slice(terminal + 1)).toEqual([]);
    const asks = arrivals.filter((a) => a.state === INPUT_REQUIRED);
    expect(asks.length).toBeGreaterThanOrEqual(2);
    const events = captured.events().filter((e) => e.taskId === task.id);
    const configId = events.find((e) => e.event === "push.attempt")?.data;
    const superseded = events.filter((e) => e.event === "push.superseded");
    expect(superseded.map((e) => e.data)).toEqual([{ configId: (configId as { configId: string }).configId, seq: asks[0]!.seq }]);
    expect(superseded[0]).toMatchObject({ tenant: "assistant", taskId: task.id, turnId: expect.any(String) });
    // Superseded is not given up: no dead letter, none logged.
    expect((await taskOf(caller, task.id)).metadata?.[DEAD_LETTERS_KEY]).toBeUndefined();
    expect(events.filter((e) => e.event === "push.dead_lettered")).toEqual([]);
  });

  it("is alive for the reconciler until its request expires, whatever its request's push did", async () => {
    asker();
    const caller = newCaller();
    const arrivals = pushEndpoint(() => answerOf(200));
    const task = await send(caller, "ask me later");
    await eventually(
      () => arrivals.some((a) => a.state === INPUT_REQUIRED && a.status === 200),
      (found) => found,
      "the request's push",
    );
    const request = (await taskOf(caller, task.id)).status.message.parts.find((p: { data?: { expiresAt?: string } }) => p.data?.expiresAt)!.data;
    const turn = () => runInDurableObject(objectOf(caller), (_i, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).turns.get(task.id)!);
    // The promise the waiting turn made once its push went out: until its request's expiry, at least.
    const promised = await eventually(turn, (row) => row.expectedBy >= Date.parse(request.expiresAt), "the wait's report");
    // A reconcile pass ten minutes on finds it alive: not re-driven.
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, "now").mockImplementation(() => realNow() + 10 * 60_000);
    await reconcileNow(objectOf(caller));
    vi.restoreAllMocks();
    expect(await turn()).toMatchObject({ attempts: 0, instanceId: promised.instanceId });
  });

  it("a request given up is not re-delivered to a config the terminal push reached since: it is superseded", async () => {
    captured = captureConsole();
    asker();
    const caller = newCaller();
    const arrivals = pushEndpoint((push) => answerOf(push.state === INPUT_REQUIRED ? 404 : 200));
    const task = await send(caller, "which one?");
    const letters = await eventually(
      async () => (await taskOf(caller, task.id)).metadata?.[DEAD_LETTERS_KEY],
      (found) => Array.isArray(found) && found.length > 0,
      "the request's dead letter",
    );
    expect((await answer(caller, task.id, "the first")).body.error).toBeUndefined();
    await delivered(arrivals, task.id);
    await eventually(
      () => openTurns(caller),
      (n) => n === 0,
      "the turn closed",
    );
    // The integrator sets the config again, as docs/gatekeeper.md says to fetch dead letters.
    const [config] = (await call("ListTaskPushNotificationConfigs", { taskId: task.id }, { mint: caller })).body.result.configs;
    const again = await call("CreateTaskPushNotificationConfig", { taskId: task.id, id: config.id, url: PUSH_URL, token: "notify-secret" }, { mint: caller });
    expect(again.body.error).toBeUndefined();
    await eventually(
      async () => (await taskOf(caller, task.id)).metadata?.[DEAD_LETTERS_KEY],
      (found) => found === undefined,
      "the dead letter settled",
    );
    await eventually(
      () => openTurns(caller),
      (n) => n === 0,
      "the re-delivery closed",
    );
    const terminal = arrivals.findIndex((a) => a.terminal);
    expect(arrivals.slice(terminal + 1)).toEqual([]);
    const superseded = captured.events().filter((e) => e.taskId === task.id && e.event === "push.superseded");
    expect(superseded.map((e) => e.data)).toEqual([{ configId: config.id, seq: letters[0].seq }]);
  });
});

describe("the caps on a caller's open turns", () => {
  it("32 finished tasks whose pushes are being retried do not refuse a 33rd send", async () => {
    const caller = newCaller();
    let release = false;
    // Each terminal push: refused once, then held (the gatekeeper is slow to come back) until released.
    const arrivals = pushEndpoint(async (_push, n) => {
      if (n === 1) return answerOf(503);
      while (!release) await pause(10);
      return answerOf(200);
    });
    const tasks = [];
    for (let i = 0; i < 32; i++) tasks.push(await send(caller, `task ${i}`));
    await eventually(
      () => new Set(arrivals.filter((a) => a.terminal && a.status === 0).map((a) => a.taskId)).size,
      (retrying) => retrying === 32,
      "32 terminal pushes being retried",
      2_000,
    );
    for (const task of tasks) expect((await taskOf(caller, task.id)).status.state).toBe("TASK_STATE_COMPLETED");
    const more = await call("SendMessage", sendParams("the 33rd"), { mint: caller });
    expect(more.status).toBe(200);
    expect(more.body.error).toBeUndefined();
    release = true;
    await delivered(arrivals, more.body.result.task.id);
    await eventually(
      () => openTurns(caller),
      (n) => n === 0,
      "every turn delivered",
      2_000,
    );
  }, 120_000);

  it("the pending-deliveries bound refuses a send past it with 429 QUOTA_EXCEEDED naming it, and creates nothing", async () => {
    const caller = newCaller();
    await limitsOf(caller, { maxPendingDeliveries: 2 });
    let release = false;
    const arrivals = pushEndpoint(async (_push, n) => {
      if (n === 1) return answerOf(503);
      while (!release) await pause(10);
      return answerOf(200);
    });
    await send(caller, "first");
    await send(caller, "second");
    await eventually(
      () => new Set(arrivals.filter((a) => a.terminal && a.status === 0).map((a) => a.taskId)).size,
      (retrying) => retrying === 2,
      "two terminal pushes being retried",
    );
    const refused = await call("SendMessage", sendParams("third", "m-third"), { mint: caller });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe("60");
    expect(refused.body.error).toMatchObject({
      code: -32000,
      data: [
        {
          reason: "QUOTA_EXCEEDED",
          domain: "dynamicagents.dev",
          metadata: { limit: "maxPendingDeliveries", pendingDeliveries: "2", retryAfterSeconds: "60" },
        },
      ],
    });
    expect((await call("ListTasks", {}, { mint: caller })).body.result.totalSize).toBe(2);
    release = true;
    await eventually(
      () => openTurns(caller),
      (n) => n === 0,
      "both delivered",
    );
    const later = await call("SendMessage", sendParams("third", "m-third"), { mint: caller });
    expect(later.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
  });

  it("the pending-questions cap refuses a send past it with 429 QUOTA_EXCEEDED naming it; an answer makes room", async () => {
    asker();
    const caller = newCaller();
    await limitsOf(caller, { maxPendingQuestions: 1 });
    const task = await send(caller, "ask me");
    await eventually(
      async () => (await taskOf(caller, task.id)).status.state,
      (state) => state === INPUT_REQUIRED,
      "the task to wait for its answer",
    );
    const refused = await call("SendMessage", sendParams("another", "m-another"), { mint: caller });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: -32000,
      data: [{ reason: "QUOTA_EXCEEDED", metadata: { limit: "maxPendingQuestions", pendingQuestions: "1", retryAfterSeconds: "5" } }],
    });
    expect((await call("ListTasks", {}, { mint: caller })).body.result.totalSize).toBe(1);
    expect((await answer(caller, task.id, "Lyon")).body.error).toBeUndefined();
    const later = await call("SendMessage", sendParams("another", "m-another"), { mint: caller });
    expect(later.body.error).toBeUndefined();
  });
});
