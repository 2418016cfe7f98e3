import { env } from "cloudflare:workers";
import { evictDurableObject, introspectWorkflowInstance, runInDurableObject } from "cloudflare:test";
import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { callerObjectName } from "@dynamicagents/core/worker";
import { GATEKEEPER, ORIGIN, PUSH_URL } from "./support/constants.js";
import { chatCompletion, droppedConnection, eventually } from "./support/outbound.js";
import { useTurnHarness } from "./support/turn-harness.js";
import { call, referenceWorker, sendParams } from "./support/rpc.js";
import { assistantPolicy } from "../reference/policy.js";
import { turnInstanceId, type CallerObject, type TurnObject } from "@dynamicagents/core/boundary";
import { isReconcilingNow, reconcileNow } from "./support/reconcile.js";
import { driven, openTurnOf, type DrivenObject } from "./support/turns.js";
import { DEAD_LETTERS_KEY, EVENT_SEQ_HEADER } from "@dynamicagents/core/a2a";
import { captureConsole } from "./support/console-capture.js";
import type { TurnLogLine } from "@dynamicagents/core/telemetry";

const newCaller = () => ({ identity: { key: `caller-${crypto.randomUUID()}` } });
const agentOf = (key: string, tenant = "assistant") =>
  (tenant === "assistant" ? env.ASSISTANT : env.RESEARCHER).get(
    (tenant === "assistant" ? env.ASSISTANT : env.RESEARCHER).idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant, key })),
  );

const harness = useTurnHarness();

/** The one Workflow instance this spec started (created right after the accept, not before it). */
async function onlyInstance() {
  const instances = await eventually(
    () => harness.workflows.get(),
    (found) => found.length > 0,
    "the turn's Workflow instance",
  );
  expect(instances).toHaveLength(1);
  return instances[0]!;
}

/** A model whose answer the spec releases by hand, to act while the turn is in flight. */
function heldModel() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  harness.outbound.model = async (c) => {
    entered();
    await gate;
    return chatCompletion(`late answer to ${c.model}`, c.model);
  };
  return { started, release };
}

describe("accept, then notify", () => {
  it("delivers the answer by a signed push that verifies against the JWKS", async () => {
    const accepted = await call("SendMessage", sendParams("hello there"), { mint: newCaller() });
    expect(accepted.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
    await (await onlyInstance()).waitForStatus("complete");

    expect(harness.outbound.pushes).toHaveLength(1);
    const push = harness.outbound.pushes[0]!;
    expect(push.url).toBe(PUSH_URL);
    expect(push.headers.get("Content-Type")).toBe("application/a2a+json");
    expect(push.headers.get("x-a2a-notification-token")).toBe("notify-secret");
    expect(push.body.task.id).toBe(accepted.body.result.task.id);
    expect(push.body.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(push.body.task.artifacts[0].parts[0].text).toBe("echo: hello there");

    const token = push.headers.get("Authorization")!.replace(/^Bearer /, "");
    const jwks = await (await referenceWorker(new Request(`${ORIGIN}/.well-known/jwks.json`))).json();
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks as never), {
      algorithms: ["EdDSA"],
      issuer: ORIGIN,
      audience: PUSH_URL,
    });
    expect(protectedHeader).toMatchObject({ kid: "a2a-test", jku: `${ORIGIN}/.well-known/jwks.json` });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(300);
    expect(harness.outbound.modelCalls).toHaveLength(1);
  });

  it("starts one Workflow, makes one model call and sends one push for a messageId sent five times at once", async () => {
    const caller = newCaller();
    const replies = await Promise.all(Array.from({ length: 5 }, () => call("SendMessage", sendParams("once", "dup-1"), { mint: caller })));
    expect(new Set(replies.map((r) => r.body.result.task.id)).size).toBe(1);
    await (await onlyInstance()).waitForStatus("complete");
    expect(harness.outbound.pushes).toHaveLength(1);
    expect(harness.outbound.modelCalls).toHaveLength(1);
    // A retry after the turn finished still starts nothing.
    const late = await call("SendMessage", sendParams("once", "dup-1"), { mint: caller });
    expect(late.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(await harness.workflows.get()).toHaveLength(1);
  });

  it("retries a webhook answering 503 twice, without calling the model again", async () => {
    let answers = 0;
    harness.outbound.pushReplies.set(PUSH_URL, () => new Response(null, { status: ++answers <= 2 ? 503 : 200 }));
    await call("SendMessage", sendParams("flaky webhook"), { mint: newCaller() });
    await (await onlyInstance()).waitForStatus("complete");
    expect(answers).toBe(3);
    expect(harness.outbound.pushes).toHaveLength(1);
    expect(harness.outbound.pushes[0]!.body.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(harness.outbound.modelCalls).toHaveLength(1);
  });

  it("falls back to the fallback model when the primary keeps failing, after retrying it", async () => {
    harness.outbound.model = (c) => (c.model === "primary-model" ? new Response("overloaded", { status: 500 }) : chatCompletion("from the fallback", c.model));
    await call("SendMessage", sendParams("hi"), { mint: newCaller() });
    await (await onlyInstance()).waitForStatus("complete");
    // A 500 is transient: the primary is tried three times (two retries), then the fallback.
    expect(harness.outbound.modelCalls.map((c) => c.model)).toEqual(["primary-model", "primary-model", "primary-model", "fallback-model"]);
    expect(harness.outbound.pushes[0]!.body.task.artifacts[0].parts[0].text).toBe("from the fallback");
  });

  it("completes with one answer when the model answers 500 once, then succeeds: retried, no fallback", async () => {
    let calls = 0;
    harness.outbound.model = (c) => (++calls === 1 ? new Response("busy", { status: 503 }) : chatCompletion("second time lucky", c.model));
    await call("SendMessage", sendParams("hi"), { mint: newCaller() });
    await (await onlyInstance()).waitForStatus("complete");
    expect(harness.outbound.modelCalls.map((c) => c.model)).toEqual(["primary-model", "primary-model"]);
    expect(harness.outbound.pushes).toHaveLength(1);
    expect(harness.outbound.pushes[0]!.body.task.artifacts).toEqual([expect.objectContaining({ parts: [{ text: "second time lucky" }] })]);
  });

  it("retries a request whose connection the model endpoint dropped, and completes without the fallback", async () => {
    let calls = 0;
    harness.outbound.model = (c) => (++calls === 1 ? droppedConnection() : chatCompletion("answered after the drop", c.model));
    await call("SendMessage", sendParams("hi"), { mint: newCaller() });
    await (await onlyInstance()).waitForStatus("complete");
    expect(harness.outbound.modelCalls.map((c) => c.model)).toEqual(["primary-model", "primary-model"]);
    const task = harness.outbound.pushes[0]!.body.task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts).toEqual([expect.objectContaining({ parts: [{ text: "answered after the drop" }] })]);
  });

  it("falls back, after retrying, when every connection to the primary drops, as for a 5xx", async () => {
    harness.outbound.model = (c) => (c.model === "primary-model" ? droppedConnection() : chatCompletion("from the fallback", c.model));
    await call("SendMessage", sendParams("hi"), { mint: newCaller() });
    await (await onlyInstance()).waitForStatus("complete");
    expect(harness.outbound.modelCalls.map((c) => c.model)).toEqual(["primary-model", "primary-model", "primary-model", "fallback-model"]);
    expect(harness.outbound.pushes[0]!.body.task.artifacts[0].parts[0].text).toBe("from the fallback");
  });

  it("does not retry what would fail the same way (a 400): straight to the fallback", async () => {
    harness.outbound.model = (c) => (c.model === "primary-model" ? new Response("bad request", { status: 400 }) : chatCompletion("fallback", c.model));
    await call("SendMessage", sendParams("hi"), { mint: newCaller() });
    await (await onlyInstance()).waitForStatus("complete");
    expect(harness.outbound.modelCalls.map((c) => c.model)).toEqual(["primary-model", "fallback-model"]);
  });

  it("ends failed with a readable message when both models fail", async () => {
    harness.outbound.model = () => new Response("down", { status: 500 });
    await call("SendMessage", sendParams("hi"), { mint: newCaller() });
    await (await onlyInstance()).waitForStatus("complete");
    const task = harness.outbound.pushes[0]!.body.task;
    expect(task.status.state).toBe("TASK_STATE_FAILED");
    const text: string = task.status.message.parts[0].text;
    expect(text).toMatch(/^Sorry, I could not get an answer/);
    expect(text).not.toMatch(/at .*\(|Error:|stack/);
  });

  it("logs the models' errors only scrubbed: a provider error quoting the API key never reaches the log", async () => {
    const apiKey = (env as { OPENAI_API_KEY: string }).OPENAI_API_KEY;
    // What an OpenAI-compatible endpoint answers a wrong key, the key quoted back.
    harness.outbound.model = () =>
      Response.json({ error: { message: `Incorrect API key provided: ${apiKey}`, type: "invalid_request_error" } }, { status: 401 });
    using captured = captureConsole();
    const task = (await call("SendMessage", sendParams("hi"), { mint: newCaller() })).body.result.task;
    await (await onlyInstance()).waitForStatus("complete");
    expect(harness.outbound.pushes[0]!.body.task.status.state).toBe("TASK_STATE_FAILED");
    const failure = captured.lines().filter((line) => line.includes(`of ${task.id} failed on every model`));
    expect(failure).toHaveLength(1);
    expect(failure[0]).toContain("[redacted]");
    expect(captured.lines().filter((line) => line.includes(apiKey))).toEqual([]);
  });

  it("announces canceled, never a late completed, when canceled mid-turn", async () => {
    const held = heldModel();
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("slow"), { mint: caller })).body.result.task;
    await held.started;
    const canceled = await call("CancelTask", { id: task.id }, { mint: caller });
    expect(canceled.body.result.status.state).toBe("TASK_STATE_CANCELED");
    held.release();
    await (await onlyInstance()).waitForStatus("complete");
    expect(harness.outbound.pushes).toHaveLength(1);
    expect(harness.outbound.pushes[0]!.body.task.status.state).toBe("TASK_STATE_CANCELED");
    expect((await call("GetTask", { id: task.id }, { mint: caller })).body.result.status.state).toBe("TASK_STATE_CANCELED");
  });

  it("does not run the turn of a task canceled before the Workflow reached it", async () => {
    const caller = newCaller();
    const held = heldModel();
    const first = (await call("SendMessage", sendParams("first"), { mint: caller })).body.result.task;
    await held.started;
    // The second task is canceled while still submitted.
    const second = (await call("SendMessage", sendParams("second"), { mint: caller })).body.result.task;
    await call("CancelTask", { id: second.id }, { mint: caller });
    held.release();
    const both = await eventually(
      () => harness.workflows.get(),
      (found) => found.length === 2,
      "both Workflow instances",
    );
    for (const instance of both) await instance.waitForStatus("complete");
    const states = Object.fromEntries(harness.outbound.pushes.map((p) => [p.body.task.id, p.body.task.status.state]));
    expect(states).toEqual({ [first.id]: "TASK_STATE_COMPLETED", [second.id]: "TASK_STATE_CANCELED" });
    expect(harness.outbound.modelCalls.map((c) => c.messages.at(-1)?.content)).toEqual(["first"]);
  });

  it("survives eviction of the caller's object between every step of a turn", async () => {
    // The test pool's eviction also tears down its local Workflow engine, so
    // this spec plays the Workflow's part itself: the same calls, in the same
    // order, with the object evicted before each one.
    await harness.workflows.modifyAll(async (m) => {
      await m.mockStepError({ name: "run" }, new Error("the spec drives this turn"));
    });
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("survive"), { mint: caller })).body.result.task;
    await (await onlyInstance()).waitForStatus("errored");
    const stub = agentOf(caller.identity.key);
    const agent: DrivenObject = driven(stub);
    const instanceId = await openTurnOf(stub, task.id);

    await evictDurableObject(stub);
    // One call starts the turn, runs its round and makes the terminal write.
    const step = await agent.runTurn(task.id, ORIGIN, 1, instanceId);
    expect(step).toMatchObject({ ok: true, value: { kind: "finished", state: "TASK_STATE_COMPLETED", closed: false } });
    await evictDurableObject(stub);
    // A re-run of the step after eviction gets the recorded turn, not a second model call.
    const again = await agent.runTurn(task.id, ORIGIN, 1, instanceId);
    expect(harness.outbound.modelCalls).toHaveLength(1);
    if (!step.ok || step.value.kind !== "finished" || !again.ok || again.value.kind !== "finished") throw new Error("unreachable");
    const { wide, ...ran } = step.value;
    const { wide: rebuilt, ...ranAgain } = again.value;
    expect(ranAgain).toEqual(ran);
    // Its wide log line is rebuilt (docs/telemetry.md "Evicted mid-turn"), as the same line: one to de-duplicate on.
    const same = (line: unknown) => {
      const { eventId, taskId, traceId } = line as TurnLogLine;
      return { eventId, taskId, traceId };
    };
    expect(rebuilt).toMatchObject({ event: "turn.finished", data: { summary: { partial: true } } });
    expect(same(rebuilt)).toEqual(same(wide));
    expect(same(wide)).toEqual({ eventId: expect.any(String), taskId: task.id, traceId: expect.any(String) });
    // The terminal write took effect once: a later one is refused.
    expect(await agent.finishTurn(task.id)).toEqual({ ok: true, value: { saved: false, state: "TASK_STATE_COMPLETED" } });
    const plan = step.value.push;
    expect(plan.configs.map((c) => c.config.url)).toEqual([PUSH_URL]);
    await evictDurableObject(stub);
    // What a later attempt sends, read back after an eviction, is what the terminal write built.
    const out = await agent.pushOf(task.id, plan.configs[0]!.id, plan.seq);
    expect(out).toEqual({ ok: true, value: { config: plan.configs[0]!.config, body: plan.body } });
    const body = plan.body as { task: { status: { state: string }; artifacts: { parts: { text: string }[] }[] } };
    expect(body.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(body.task.artifacts[0]?.parts[0]?.text).toBe("echo: survive");
    expect(await isReconcilingNow(stub)).toBe(true);
    await agent.turnDelivered(task.id, instanceId);
    await evictDurableObject(stub);
    // The schedule outlives the turn until a pass finds nothing open.
    expect(await isReconcilingNow(stub)).toBe(true);
    expect(await reconcileNow(stub)).toBe(false);
  });
});

describe("no turn is left hanging", () => {
  it("re-drives a Workflow that errors for good, then fails the task with one push", async () => {
    const caller = newCaller();
    // The turn's own instance crashes in every run; the announcer the reconciler starts after giving up does not.
    const namespace = env.ASSISTANT;
    const agentId = namespace.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key })).toString();
    await using doomed = await introspectWorkflowInstance(env.TURN_WORKFLOW, await turnInstanceId(agentId, "doomed-1"));
    await doomed.modify(async (m) => {
      await m.disableRetryDelays();
      await m.mockStepError({ name: "run" }, new Error("the isolate crashed"));
    });
    using captured = captureConsole();
    const task = (await call("SendMessage", sendParams("doomed", "doomed-1"), { mint: caller })).body.result.task;
    const agent = agentOf(caller.identity.key);
    await (await onlyInstance()).waitForStatus("errored");

    for (let pass = 0; pass < 10 && harness.outbound.pushes.length === 0; pass++) {
      expect(await reconcileNow(agent)).toBe(true);
      for (const instance of await harness.workflows.get()) {
        await instance.waitForStatus("complete").catch(() => undefined);
      }
    }
    expect(harness.outbound.pushes).toHaveLength(1);
    const pushed = harness.outbound.pushes[0]!.body.task;
    expect(pushed.id).toBe(task.id);
    expect(pushed.status.state).toBe("TASK_STATE_FAILED");
    // In the agent's own words for a turn nothing could finish.
    expect(pushed.status.message.parts[0].text).toBe(assistantPolicy.messages.abandoned);
    // What the reconciler did is in the log: each re-drive once, then the abandon, and the turn's end.
    const events = captured.events().filter((e) => e.taskId === task.id);
    const actions = events.flatMap((e) => (e.event === "reconciler.action" ? [e.data.action] : []));
    expect(actions.at(-1)).toBe("abandoned");
    expect(actions.filter((a) => a === "restarted").length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
    // One wide line for the turn: the object's, which the announcer's run step completed with its push (docs/telemetry.md "Which lines").
    const finished = expect.objectContaining({
      state: "TASK_STATE_FAILED",
      summary: expect.objectContaining({ pushes: expect.objectContaining({ attempts: 1 }) }),
    });
    expect(events.filter((e) => e.event === "turn.finished").map((e) => e.data)).toEqual([finished]);
    // Delivered: the next pass finds nothing open and clears the schedule.
    await eventually(
      () => reconcileNow(agent),
      (armed) => armed === false,
      "the reconcile schedule to be cleared",
    );
  });

  it("gives up when the announcer crashes too: the abandoned turn's kept wide line is written then, once", async () => {
    const caller = newCaller();
    const agentId = env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key })).toString();
    const instanceId = await turnInstanceId(agentId, "doomed-2");
    // The turn's own instance and the one that would announce its failure both crash in every run.
    await using doomed = await introspectWorkflowInstance(env.TURN_WORKFLOW, instanceId);
    await using announcer = await introspectWorkflowInstance(env.TURN_WORKFLOW, `${instanceId.slice(0, 80)}-final`);
    for (const instance of [doomed, announcer]) {
      await instance.modify(async (m) => {
        await m.disableRetryDelays();
        await m.mockStepError({ name: "run" }, new Error("the isolate crashed"));
      });
    }
    using captured = captureConsole();
    const task = (await call("SendMessage", sendParams("doomed", "doomed-2"), { mint: caller })).body.result.task;
    const agent = agentOf(caller.identity.key);
    await doomed.waitForStatus("errored");
    const lines = () => captured.events().filter((e) => e.taskId === task.id);
    for (let pass = 0; pass < 10 && !lines().some((e) => e.event === "reconciler.action" && e.data.action === "gave-up"); pass++) {
      await reconcileNow(agent);
      for (const instance of await harness.workflows.get()) await instance.waitForStatus("errored").catch(() => undefined);
    }
    expect(
      lines()
        .flatMap((e) => (e.event === "reconciler.action" ? [e.data.action] : []))
        .slice(-2),
    ).toEqual(["abandoned", "gave-up"]);
    expect(harness.outbound.pushes).toHaveLength(0);
    // Nobody took it: the object writes it as it is, without a push.
    const finished = lines().filter((e) => e.event === "turn.finished");
    expect(finished.map((e) => e.data)).toEqual([
      expect.objectContaining({ state: "TASK_STATE_FAILED", summary: expect.objectContaining({ pushes: expect.objectContaining({ attempts: 0 }) }) }),
    ]);
  });

  it("restarts a terminated Workflow and still answers", async () => {
    const held = heldModel();
    const caller = newCaller();
    await call("SendMessage", sendParams("terminated", "m-term"), { mint: caller });
    await held.started;
    const instance = await onlyInstance();
    const agentId = env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key })).toString();
    await (await env.TURN_WORKFLOW.get(await turnInstanceId(agentId, "m-term"))).terminate();
    await instance.waitForStatus("terminated");
    held.release();
    expect(await reconcileNow(agentOf(caller.identity.key))).toBe(true);
    await eventually(
      () => harness.outbound.pushes.length,
      (n) => n === 1,
      "the push after the re-drive",
    );
    expect(harness.outbound.pushes[0]!.body.task.status.state).toBe("TASK_STATE_COMPLETED");
  });
});

/** The task's turn still open in its object (a delivered turn's record goes): 0 or 1. */
const openTurns = (caller: { identity: { key: string } }, taskId: string) =>
  runInDurableObject(
    agentOf(caller.identity.key),
    (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM turns WHERE task_id = ?", taskId).one().n,
  );

describe("the turn's steps", () => {
  it("a turn that answers is one step: the run step makes the push the terminal write built and closes the turn", async () => {
    const caller = newCaller();
    const accepted = await call("SendMessage", sendParams("one step"), { mint: caller });
    const instance = await onlyInstance();
    await instance.waitForStatus("complete");
    const run = await instance.waitForStepResult({ name: "run" });
    expect(run).toMatchObject({
      ok: true,
      value: { kind: "pushed", state: "TASK_STATE_COMPLETED", pushed: { closed: true, tried: [{ kind: "delivered", status: 200, closed: true }] } },
    });
    expect(harness.outbound.pushes).toHaveLength(1);
    expect(harness.outbound.pushes[0]!.body.task.id).toBe(accepted.body.result.task.id);
    // The push the step recorded is the one that went out: the terminal write's event.
    expect(harness.outbound.pushes[0]!.headers.get(EVENT_SEQ_HEADER)).toBe(String((run as { value: { pushed: { seq: number } } }).value.pushed.seq));
    expect(await openTurns(caller, accepted.body.result.task.id)).toBe(0);
  });

  it("with two configs, one refused for good keeps the other from closing the turn: the dead letter is recorded first, then the turn closes", async () => {
    const held = heldModel();
    const caller = newCaller();
    harness.outbound.pushReplies.set(PUSH_URL, () => new Response(null, { status: 400 }));
    const task = (await call("SendMessage", sendParams("two configs"), { mint: caller })).body.result.task;
    await held.started;
    const second = `${PUSH_URL}/second`;
    expect((await call("CreateTaskPushNotificationConfig", { taskId: task.id, id: "second", url: second }, { mint: caller })).body.error).toBeUndefined();
    held.release();
    const instance = await onlyInstance();
    await instance.waitForStatus("complete");
    const run = (await instance.waitForStepResult({ name: "run" })) as {
      value: { pushed: { closed: boolean; tried: Array<{ configId: string; kind: string; closed?: boolean }> } };
    };
    expect(run.value.pushed.closed).toBe(false);
    expect(run.value.pushed.tried.map((t) => [t.configId === "second" ? "second" : "first", t.kind, t.closed === true])).toEqual([
      ["first", "permanent", false],
      ["second", "delivered", false],
    ]);
    expect(await instance.waitForStepResult({ name: "push dead letters" })).toMatchObject({ ok: true });
    expect(await instance.waitForStepResult({ name: "delivered" })).toMatchObject({ ok: true });
    expect(harness.outbound.pushes.map((p) => p.url)).toEqual([second]);
    const letters = (await call("GetTask", { id: task.id }, { mint: caller })).body.result.metadata?.[DEAD_LETTERS_KEY];
    expect(letters).toEqual([expect.objectContaining({ status: 400 })]);
    expect(await openTurns(caller, task.id)).toBe(0);
  });
});

describe("push configs", () => {
  it("creates, gets, lists and deletes configs (idempotently), and pushes to every one", async () => {
    const held = heldModel();
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("fan out"), { mint: caller })).body.result.task;
    await held.started;
    const second = `${PUSH_URL}/second`;
    const created = await call("CreateTaskPushNotificationConfig", { taskId: task.id, id: "second", url: second, token: "tok-2" }, { mint: caller });
    expect(created.body.result).toMatchObject({ id: "second", taskId: task.id, url: second, token: "tok-2" });
    expect((await call("GetTaskPushNotificationConfig", { taskId: task.id, id: "second" }, { mint: caller })).body.result.url).toBe(second);
    const listed = await call("ListTaskPushNotificationConfigs", { taskId: task.id }, { mint: caller });
    expect(listed.body.result.configs).toHaveLength(2);
    expect(listed.body.result.nextPageToken).toBe("");

    held.release();
    await (await onlyInstance()).waitForStatus("complete");
    expect(harness.outbound.pushes.map((p) => p.url).sort()).toEqual([PUSH_URL, second].sort());
    expect(harness.outbound.pushes.find((p) => p.url === second)!.headers.get("x-a2a-notification-token")).toBe("tok-2");

    expect((await call("DeleteTaskPushNotificationConfig", { taskId: task.id, id: "second" }, { mint: caller })).body.result).toBeNull();
    expect((await call("DeleteTaskPushNotificationConfig", { taskId: task.id, id: "second" }, { mint: caller })).body.result).toBeNull();
    expect((await call("GetTaskPushNotificationConfig", { taskId: task.id, id: "second" }, { mint: caller })).body.error.code).toBe(-32001);
  });

  it("refuses a config off the allowlist, and another caller's task is TaskNotFound", async () => {
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("x"), { mint: caller })).body.result.task;
    const evil = await call("CreateTaskPushNotificationConfig", { taskId: task.id, url: "https://evil.test/hook" }, { mint: caller });
    expect(evil.body.error.code).toBe(-32602);
    const other = newCaller();
    for (const [method, params] of [
      ["CreateTaskPushNotificationConfig", { taskId: task.id, url: PUSH_URL }],
      ["GetTaskPushNotificationConfig", { taskId: task.id, id: "x" }],
      ["ListTaskPushNotificationConfigs", { taskId: task.id }],
      ["DeleteTaskPushNotificationConfig", { taskId: task.id, id: "x" }],
    ] as const) {
      expect((await call(method, params, { mint: other })).body.error.code, method).toBe(-32001);
    }
  });

  it("uses the config's own credentials instead of the callback token when it has authentication (A2A §4.3.3)", async () => {
    const params = sendParams("auth");
    (params.configuration.taskPushNotificationConfig as Record<string, unknown>).authentication = { scheme: "Basic", credentials: "dXNlcjpwYXNz" };
    await call("SendMessage", params, { mint: newCaller() });
    await (await onlyInstance()).waitForStatus("complete");
    expect(harness.outbound.pushes[0]!.headers.get("Authorization")).toBe("Basic dXNlcjpwYXNz");
  });
});

describe("across a deploy", () => {
  it("an object woken with an open turn and no reconcile schedule (an earlier version's) arms one", async () => {
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec(
        "INSERT INTO tasks (id, message_id, context_id, state, status_at, created_at, task_json) VALUES ('t-old', 'm-old', 'c', 'TASK_STATE_WORKING', 1, 1, ?)",
        JSON.stringify({ id: "t-old", contextId: "c", status: { state: "TASK_STATE_WORKING" } }),
      );
      state.storage.sql.exec(
        "INSERT INTO turns (task_id, instance_id, params_json, attempts, progress_at, created_at) VALUES ('t-old', 'turn-old', '{}', 0, 1, 1)",
      );
    });
    expect(await isReconcilingNow(stub)).toBe(false);
    await evictDurableObject(stub);
    // Any call wakes it.
    const woken: CallerObject = stub;
    expect((await woken.getTask({ taskId: "t-old" })).ok).toBe(true);
    expect(await isReconcilingNow(stub)).toBe(true);
  });
});

describe("a turn about to count as lost", () => {
  it("gets a pass of its own at that moment, not up to a whole interval later", async () => {
    await harness.workflows.modifyAll(async (m) => m.mockStepError({ name: "run" }, new Error("held by the spec")));
    const caller = newCaller();
    await call("SendMessage", sendParams("cut off"), { mint: caller });
    const stub = agentOf(caller.identity.key);
    // Its last report promised the next one 20 s ago: with the policy's 30 s grace it counts as lost in about 10 s.
    const due = await runInDurableObject(stub, (_instance, state) => {
      const expectedBy = Date.now() - 20_000;
      state.storage.sql.exec("UPDATE turns SET expected_by = ?", expectedBy);
      return expectedBy + 30_000;
    });
    await reconcileNow(stub);
    const oneOff = await runInDurableObject(stub, async (instance) =>
      (await (instance as unknown as { listSchedules(): Promise<Array<{ callback: string; type: string; time: number }>> }).listSchedules()).filter(
        (s) => s.callback === "reconcileTurns" && s.type !== "interval",
      ),
    );
    expect(oneOff).toHaveLength(1);
    // The SDK keeps the time in seconds.
    expect(Math.abs(oneOff[0]!.time * 1000 - (due + 1_000))).toBeLessThan(2_000);
    // A second pass arms no second one.
    await reconcileNow(stub);
    const again = await runInDurableObject(stub, async (instance) =>
      (await (instance as unknown as { listSchedules(): Promise<Array<{ callback: string; type: string }>> }).listSchedules()).filter(
        (s) => s.callback === "reconcileTurns" && s.type !== "interval",
      ),
    );
    expect(again).toHaveLength(1);
  });
});

describe("a turn's reports", () => {
  it("writes a report only when the last one this object wrote is a second old or more", async () => {
    const held = heldModel();
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("slow"), { mint: caller })).body.result.task;
    await held.started;
    const stub = agentOf(caller.identity.key);
    const expectedBy = () =>
      runInDurableObject(stub, (_i, state) => state.storage.sql.exec<{ e: number }>("SELECT expected_by AS e FROM turns WHERE task_id = ?", task.id).one().e);
    // The accept's record promised a report within the window; the start, right after it, wrote nothing more.
    const accepted = await expectedBy();
    const object = stub as unknown as TurnObject;
    expect((await object.pushTargets(task.id)).ok).toBe(true);
    expect(await expectedBy()).toBe(accepted);
    // A second on, a report is written again: the turn's promise moves on with it.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await object.pushTargets(task.id)).ok).toBe(true);
    const reported = await expectedBy();
    expect(reported).toBeGreaterThan(accepted);
    // A longer promise (a delivery's backoff) is cut back by the next plain report, however soon it comes.
    expect((await object.turnProgress(task.id, 120_000)).ok).toBe(true);
    const longer = await expectedBy();
    expect(longer).toBeGreaterThan(reported + 60_000);
    expect((await object.pushTargets(task.id)).ok).toBe(true);
    expect(await expectedBy()).toBeLessThan(longer);
    held.release();
    await eventually(
      () => harness.outbound.pushes.filter((p) => p.body.task?.id === task.id),
      (found) => found.length === 1,
      "the turn's push",
    );
  });
});
