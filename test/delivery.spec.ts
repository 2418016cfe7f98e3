import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { DEAD_LETTERS_KEY, EVENT_SEQ_HEADER, TASK_CLAIM, TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { turnInstanceId, type TurnObject } from "@dynamicagents/core/boundary";
import { AgentDB } from "@dynamicagents/core/db";
import { callerObjectName } from "@dynamicagents/core/worker";
import { decodeJwt } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { GATEKEEPER, ORIGIN, PUSH_URL } from "./support/constants.js";
import { eventually } from "./support/outbound.js";
import { call, sendParams, userMessage } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";
import { reconcileNow } from "./support/reconcile.js";

// Deliveries (docs/protocol.md "Events, streams and pushes"): a transient
// refusal is retried on the schedule, a permanent one is not, a delivery
// given up is a dead letter on the task, and a push config set afterwards is
// sent it once. The harness disables the Workflow's sleeps, so a schedule's
// waits take no time here; the hour is crossed by moving the clock.

const harness = useTurnHarness();
const newCaller = () => ({ identity: { key: `caller-${crypto.randomUUID()}` } });
type Caller = ReturnType<typeof newCaller>;
/** Another URL of the caller's own gatekeeper: the only origin its push configs may name. */
const LATER_URL = `${GATEKEEPER}/hooks/a2a`;

afterEach(() => vi.restoreAllMocks());

/** Every attempt at `url` (answered whatever it was), with the headers it carried. */
function attemptsAt(url: string, answer: (n: number) => Response) {
  const seen: Array<{ authorization: string; seq: string | null; body: any }> = [];
  harness.outbound.pushReplies.set(url, (request) => {
    seen.push({ authorization: request.headers.get("Authorization") ?? "", seq: request.headers.get(EVENT_SEQ_HEADER), body: null });
    return answer(seen.length);
  });
  return seen;
}

async function send(caller: Caller, text: string, messageId?: string) {
  const reply = await call("SendMessage", sendParams(text, messageId), { mint: caller });
  expect(reply.body.error).toBeUndefined();
  return reply.body.result.task as { id: string };
}

async function deadLettersOf(caller: Caller, taskId: string) {
  return eventually(
    async () => (await call("GetTask", { id: taskId }, { mint: caller })).body.result.metadata?.[DEAD_LETTERS_KEY],
    (letters) => Array.isArray(letters) && letters.length > 0,
    "a dead letter on the task",
  );
}

const instanceDone = async () => {
  const [instance] = await eventually(
    () => harness.workflows.get(),
    (found) => found.length > 0,
    "the turn's instance",
  );
  await instance!.waitForStatus("complete");
};

describe("delivery classes", () => {
  it("a 503 is retried until it is taken, each attempt with a callback token of its own for this task", async () => {
    const attempts = attemptsAt(PUSH_URL, (n) => new Response(null, { status: n <= 2 ? 503 : 200 }));
    const caller = newCaller();
    const task = await send(caller, "retry me");
    await instanceDone();
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.seq)).size).toBe(1);
    const claims = attempts.map((a) => decodeJwt(a.authorization.replace(/^Bearer /, "")));
    expect(new Set(claims.map((c) => c.jti)).size).toBe(3);
    expect(claims.every((c) => c[TASK_CLAIM] === task.id)).toBe(true);
    const done = (await call("GetTask", { id: task.id }, { mint: caller })).body.result;
    expect(done.metadata?.[DEAD_LETTERS_KEY]).toBeUndefined();
  });

  it("a 404 is not retried: one attempt, and a dead letter naming the config, the event and the status", async () => {
    const attempts = attemptsAt(PUSH_URL, () => new Response(null, { status: 404 }));
    const caller = newCaller();
    const task = await send(caller, "nobody home");
    const letters = await deadLettersOf(caller, task.id);
    await instanceDone();
    expect(attempts).toHaveLength(1);
    const [config] = (await call("ListTaskPushNotificationConfigs", { taskId: task.id }, { mint: caller })).body.result.configs;
    expect(letters).toEqual([{ configId: config.id, seq: Number(attempts[0]!.seq), status: 404, at: expect.any(String) }]);
    expect(Number.isNaN(Date.parse(letters[0].at))).toBe(false);
  });

  it("a redirect is permanent too: not followed, not retried", async () => {
    const attempts = attemptsAt(PUSH_URL, () => new Response(null, { status: 302, headers: { Location: LATER_URL } }));
    const caller = newCaller();
    const task = await send(caller, "moved");
    expect((await deadLettersOf(caller, task.id))[0].status).toBe(302);
    await instanceDone();
    expect(attempts).toHaveLength(1);
    expect(harness.outbound.requests.filter((r) => r.url === LATER_URL)).toEqual([]);
  });

  it("a transient refusal ends in a dead letter once the hour is over", async () => {
    const realNow = Date.now.bind(Date);
    let shift = 0;
    vi.spyOn(Date, "now").mockImplementation(() => realNow() + shift);
    // The third attempt comes, as far as the clock says, an hour and a minute after the first.
    const attempts = attemptsAt(PUSH_URL, (n) => {
      if (n === 2) shift = 61 * 60_000;
      return new Response(null, { status: 503 });
    });
    const caller = newCaller();
    const task = await send(caller, "down all hour");
    const letters = await deadLettersOf(caller, task.id);
    await instanceDone();
    expect(letters).toEqual([expect.objectContaining({ status: 503 })]);
    expect(attempts).toHaveLength(2);
  });
});

describe("re-delivery", () => {
  it("a push config set on a task with a dead letter is sent that event once, and the dead letter goes", async () => {
    attemptsAt(PUSH_URL, () => new Response(null, { status: 404 }));
    const caller = newCaller();
    const task = await send(caller, "deliver later");
    const [letter] = await deadLettersOf(caller, task.id);
    await instanceDone();
    const set = await call("CreateTaskPushNotificationConfig", { taskId: task.id, url: LATER_URL, token: "t-2" }, { mint: caller });
    expect(set.body.error).toBeUndefined();
    const pushed = await eventually(
      () => harness.outbound.pushes.filter((p) => p.url === LATER_URL),
      (found) => found.length > 0,
      "the re-delivery",
    );
    expect(pushed[0]!.body.task.id).toBe(task.id);
    expect(pushed[0]!.body.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(Number(pushed[0]!.headers.get(EVENT_SEQ_HEADER))).toBe(letter.seq);
    const after = await eventually(
      async () => (await call("GetTask", { id: task.id }, { mint: caller })).body.result,
      (t) => t.metadata?.[DEAD_LETTERS_KEY] === undefined,
      "the dead letter cleared",
    );
    expect(after.status.state).toBe("TASK_STATE_COMPLETED");
    // Once: setting yet another config later re-delivers nothing.
    await call("CreateTaskPushNotificationConfig", { taskId: task.id, url: `${LATER_URL}/again`, token: "t-3" }, { mint: caller });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(harness.outbound.pushes.filter((p) => p.url.startsWith(LATER_URL))).toHaveLength(1);
  });

  it("a config set while the task's turn is still open is re-delivered as that turn closes", async () => {
    attemptsAt(PUSH_URL, () => new Response(null, { status: 404 }));
    const caller = newCaller();
    const task = await send(caller, "deliver at the close");
    await deadLettersOf(caller, task.id);
    await instanceDone();
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key })));
    // The task's turn still open, as while its Workflow delivers: a config set now waits for the close.
    await runInDurableObject(stub, (_i, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      const params = { tenant: "assistant", agentId: state.id.toString(), taskId: task.id, messageId: db.tasks.get(task.id)!.messageId, origin: ORIGIN };
      db.turns.open(task.id, "turn-still-open", params, 60_000);
    });
    const set = await call("CreateTaskPushNotificationConfig", { taskId: task.id, url: LATER_URL, token: "t-2" }, { mint: caller });
    expect(set.body.error).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(harness.outbound.pushes.filter((p) => p.url === LATER_URL)).toHaveLength(0);
    // Another task's turn closing starts nothing: the queue is this task's.
    const other = await send(caller, "no queue here");
    await deadLettersOf(caller, other.id);
    await eventually(
      () => runInDurableObject(stub, (_i, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).turns.get(other.id)),
      (open) => open === undefined,
      "the other turn closed",
    );
    await runInDurableObject(stub, (_i, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      db.turns.open(other.id, "turn-other", { tenant: "assistant" }, 60_000);
      expect(db.turns.close(other.id, "turn-other")).toBeUndefined();
    });
    expect((await (stub as unknown as TurnObject).turnDelivered(task.id, "turn-still-open")).ok).toBe(true);
    const pushed = await eventually(
      () => harness.outbound.pushes.filter((p) => p.url === LATER_URL),
      (found) => found.length > 0,
      "the re-delivery the close started",
    );
    expect(pushed[0]!.body.task.id).toBe(task.id);
  });

  it("a close replayed by an instance whose turn closed already leaves the record open now (a re-delivery's) alone", async () => {
    const caller = newCaller();
    const task = await send(caller, "closed once", "m-closed-once");
    await instanceDone();
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key })));
    const agent: TurnObject = stub;
    const open = () => runInDurableObject(stub, (_i, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).turns.get(task.id)?.instanceId);
    expect(await open()).toBeUndefined();
    // The record open for the task now is another instance's, as a re-delivery's is once the turn closed.
    const params = { tenant: "assistant", taskId: task.id, origin: ORIGIN };
    await runInDurableObject(stub, (_i, state) => void new AgentDB(state.storage, TERMINAL_STATE_NAMES).turns.open(task.id, "redeliver-later", params, 60_000));
    // The turn's own instance, its step re-run after a crash, closes again: that takes nothing.
    const own = await turnInstanceId(stub.id.toString(), "m-closed-once");
    expect((await agent.turnDelivered(task.id, own)).ok).toBe(true);
    expect(await open()).toBe("redeliver-later");
    expect((await agent.turnDelivered(task.id, "redeliver-later")).ok).toBe(true);
    expect(await open()).toBeUndefined();
  });

  it("a record the reconciler finds complete is closed as the turn's own last step would: the re-delivery waiting on it starts", async () => {
    attemptsAt(PUSH_URL, () => new Response(null, { status: 404 }));
    const caller = newCaller();
    const task = await send(caller, "close it for me", "m-reconciled");
    await deadLettersOf(caller, task.id);
    await instanceDone();
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key })));
    const own = await turnInstanceId(stub.id.toString(), "m-reconciled");
    // Its record still open under its own, complete instance, as when that instance's close was skipped.
    await runInDurableObject(stub, (_i, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      const params = { tenant: "assistant", agentId: state.id.toString(), taskId: task.id, messageId: "m-reconciled", origin: ORIGIN };
      db.turns.open(task.id, own, params, 60_000);
    });
    const set = await call("CreateTaskPushNotificationConfig", { taskId: task.id, url: LATER_URL, token: "t-2" }, { mint: caller });
    expect(set.body.error).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(harness.outbound.pushes.filter((p) => p.url === LATER_URL)).toHaveLength(0);
    await reconcileNow(stub);
    const pushed = await eventually(
      () => harness.outbound.pushes.filter((p) => p.url === LATER_URL),
      (found) => found.length > 0,
      "the re-delivery the reconciler's close started",
    );
    expect(pushed[0]!.body.task.id).toBe(task.id);
  });

  it("a re-delivery refused again leaves the dead letter under the new config", async () => {
    attemptsAt(PUSH_URL, () => new Response(null, { status: 404 }));
    attemptsAt(LATER_URL, () => new Response(null, { status: 410 }));
    const caller = newCaller();
    const task = await send(caller, "still nobody");
    await deadLettersOf(caller, task.id);
    await instanceDone();
    const set = (await call("CreateTaskPushNotificationConfig", { taskId: task.id, url: LATER_URL, token: "t-2" }, { mint: caller })).body.result;
    const letters = await eventually(
      async () => (await call("GetTask", { id: task.id }, { mint: caller })).body.result.metadata?.[DEAD_LETTERS_KEY],
      (found) => Array.isArray(found) && found.some((l: { configId: string }) => l.configId === set.id),
      "the new dead letter",
    );
    expect(letters).toEqual([expect.objectContaining({ configId: set.id, status: 410 })]);
  });
});

describe("retried sends", () => {
  it("the same messageId with another message is -32602 and changes nothing", async () => {
    const caller = newCaller();
    const task = await send(caller, "the original", "m-same");
    const changed = await call("SendMessage", sendParams("something else", "m-same"), { mint: caller });
    expect(changed.body.error.code).toBe(-32602);
    expect(changed.body.error.message).toContain("m-same");
    const again = await call("SendMessage", sendParams("the original", "m-same"), { mint: caller });
    expect(again.body.result.task.id).toBe(task.id);
  });

  it("the same message with a push config the task lacks adds it, and one it has is not added twice", async () => {
    const caller = newCaller();
    const message = userMessage("two places", "m-two");
    const task = await send(caller, "two places", "m-two");
    const withOther = { message, configuration: { returnImmediately: true, taskPushNotificationConfig: { url: LATER_URL, token: "t-2" } } };
    expect((await call("SendMessage", withOther, { mint: caller })).body.result.task.id).toBe(task.id);
    expect((await call("SendMessage", withOther, { mint: caller })).body.result.task.id).toBe(task.id);
    const configs = (await call("ListTaskPushNotificationConfigs", { taskId: task.id }, { mint: caller })).body.result.configs;
    expect(configs.map((c: { url: string }) => c.url).sort()).toEqual([LATER_URL, PUSH_URL].sort());
  });

  it("a retry that adds a config to a task with a dead letter gets it re-delivered there", async () => {
    attemptsAt(PUSH_URL, () => new Response(null, { status: 404 }));
    const caller = newCaller();
    const message = userMessage("retry with a new hook", "m-hook");
    const task = await send(caller, "retry with a new hook", "m-hook");
    await deadLettersOf(caller, task.id);
    await instanceDone();
    await call(
      "SendMessage",
      { message, configuration: { returnImmediately: true, taskPushNotificationConfig: { url: LATER_URL, token: "t-2" } } },
      { mint: caller },
    );
    const pushed = await eventually(
      () => harness.outbound.pushes.filter((p) => p.url === LATER_URL),
      (found) => found.length > 0,
      "the re-delivery",
    );
    expect(pushed[0]!.body.task.id).toBe(task.id);
  });
});
