import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import { mark } from "./support/agents.js";
import type { CallerObject } from "@dynamicagents/core/boundary";
import { GATEKEEPER, ORIGIN, PUSH_URL } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { useMarkerHarness } from "./support/turn-harness.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { reconcileNow } from "./support/reconcile.js";
import { call, sendParams } from "./support/rpc.js";
import { driven, openTurnOf, type DrivenObject } from "./support/turns.js";
import { AgentDB } from "@dynamicagents/core/db";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";

// Agents whose every word is a marker (test/support/agents.ts): whatever a
// user or the model reads that is not the user's, the model's or a plugin's
// own text must be one of their markers. A sentence of core's would show.

const harness = useMarkerHarness();

const edge = () => markerEdge();

function caller(tenant: "marker" | "marker-researcher") {
  const key = `caller-${crypto.randomUUID()}`;
  const namespace = tenant === "marker" ? env.MARKER_AGENT! : env.MARKER_RESEARCHER!;
  return { mint: { tenant, identity: { key } }, stub: namespace.get(namespace.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant, key }))) };
}

async function send(tenant: "marker" | "marker-researcher", text: string) {
  const who = caller(tenant);
  const { fetch, backgroundSettled } = edge();
  const reply = await call("SendMessage", sendParams(text), { worker: fetch, mint: who.mint });
  await backgroundSettled();
  return { ...who, fetch, task: reply.body.result.task };
}

const terminalPush = (taskId: string) =>
  eventually(
    () => harness.outbound.pushes.find((p) => p.body.task?.id === taskId),
    (push) => push !== undefined,
    `the terminal push of ${taskId}`,
  ).then((push) => push!.body.task);

const statusText = (task: { status: { message?: { parts: Array<{ text?: string }> } } }) => task.status.message?.parts.map((p) => p.text ?? "").join("");
const systemPrompt = (c: ModelCall) => String(c.messages.find((m) => m.role === "system")?.content ?? "");

describe("every sentence comes from the agent", () => {
  it("a failed turn ends with the agent's failure words", async () => {
    harness.outbound.model = () => new Response("upstream down", { status: 500 });
    const { task } = await send("marker", "hello");
    const done = await terminalPush(task.id);
    expect(done.status.state).toBe("TASK_STATE_FAILED");
    expect(statusText(done)).toBe(mark("failure"));
    // The model was held to the agent's soul and nothing else.
    for (const c of harness.outbound.modelCalls) expect(systemPrompt(c)).toBe(mark("soul"));
  });

  it("an answer with no text is the agent's empty-answer words", async () => {
    harness.outbound.model = (c) => chatCompletion("", c.model);
    const { task } = await send("marker", "say nothing");
    expect(statusText(await terminalPush(task.id))).toBe(mark("empty-answer"));
  });

  it("a canceled task carries the agent's canceled words", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    harness.outbound.model = async (c) => {
      await gate;
      return chatCompletion("late", c.model);
    };
    const sent = await send("marker", "take your time");
    await eventually(
      () => harness.outbound.modelCalls.length,
      (n) => n > 0,
      "the model call",
    );
    const canceled = await call("CancelTask", { id: sent.task.id }, { worker: sent.fetch, mint: sent.mint });
    expect(statusText(canceled.body.result)).toBe(mark("canceled"));
    release();
    expect(statusText(await terminalPush(sent.task.id))).toBe(mark("canceled"));
  });

  it("a turn nothing could finish is failed in the agent's abandoned words", async () => {
    await harness.workflows.modifyAll(async (m) => m.mockStepError({ name: "run" }, new Error("the isolate crashed")));
    const { task, stub, fetch, mint } = await send("marker", "doomed");
    await eventually(
      () => harness.workflows.get(),
      (found) => found.length > 0,
      "the turn's instance",
    );
    await (await harness.workflows.get())[0]!.waitForStatus("errored");
    // Every run crashes, the announcer's too: the words are read from the task (turn.spec.ts proves the push).
    const stateOf = async () => (await call("GetTask", { id: task.id }, { worker: fetch, mint })).body.result;
    for (let pass = 0; pass < 10 && (await stateOf()).status.state !== "TASK_STATE_FAILED"; pass++) {
      await reconcileNow(stub);
      for (const instance of await harness.workflows.get()) await instance.waitForStatus("errored").catch(() => undefined);
    }
    const done = await stateOf();
    expect(done.status.state).toBe("TASK_STATE_FAILED");
    expect(statusText(done)).toBe(mark("abandoned"));
  });

  it("the round loop's contract, notes, headers, tool texts and progress are the agent's", async () => {
    harness.outbound.model = (c) =>
      c.tools.includes("delegate")
        ? chatToolCall("delegate", { subtasks: [{ type: "echo_task", params: { say: "hi" } }] }, c.model)
        : chatCompletion("the answer", c.model);
    const { task } = await send("marker-researcher", "look it up");
    const done = await terminalPush(task.id);
    expect(done.artifacts[0].parts[0].text).toBe("the answer");

    const [first, second] = harness.outbound.modelCalls;
    // Round 1: soul and contract; the delegate tool described in the agent's words around core's JSON catalogue.
    expect(systemPrompt(first!)).toBe(`${mark("soul")}\n\n${mark("contract")}`);
    // Round 2, the last: the agent's last-round note, and its header over the results.
    expect(systemPrompt(second!)).toBe(`${mark("soul")}\n\n${mark("contract")}\n\n${mark("last-round")}`);
    const results = second!.messages.find((m) => String(m.content).startsWith(mark("results")));
    expect(String(results?.content).split("\n")[0]).toBe(mark("results"));

    // What the gatekeeper was told while it ran: the agent's progress words only.
    const progress = harness.outbound.pushes.filter((p) => p.body.statusUpdate?.taskId === task.id);
    expect(progress.length).toBeGreaterThan(0);
    for (const push of progress) expect(statusText(push.body.statusUpdate)).toBe(mark("progress"));
  });

  it("describes the delegate tool only in the agent's words, with core adding nothing but the JSON catalogue", async () => {
    const described: string[] = [];
    harness.outbound.model = async (c) => {
      described.push(c.toolDescriptions.delegate ?? "");
      return chatCompletion("no need", c.model);
    };
    const { task } = await send("marker-researcher", "answer directly");
    await terminalPush(task.id);
    const description = described[0] ?? "";
    expect(description.startsWith(mark("delegate"))).toBe(true);
    expect(JSON.parse(description.slice(mark("delegate").length))).toEqual([
      expect.objectContaining({ type: "echo_task", description: mark("echo-task") }),
      expect.objectContaining({ type: "ask_task", description: mark("ask-task") }),
      expect.objectContaining({ type: "model_task", description: mark("model-task") }),
    ]);
  });
});

describe("gates hold for every agent", () => {
  it("a delegating agent's plugin gate declines a turn: completed, no reply, no model call, no subtask", async () => {
    const { task } = await send("marker-researcher", "not for you #decline");
    const done = await terminalPush(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.status.message).toBeUndefined();
    expect(done.artifacts).toBeUndefined();
    expect(harness.outbound.modelCalls).toHaveLength(0);
  });

  it("and a single-inference agent's the same way", async () => {
    const { task } = await send("marker", "#decline please");
    const done = await terminalPush(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.status.message).toBeUndefined();
    expect(harness.outbound.modelCalls).toHaveLength(0);
  });
});

describe("subagents get what their parent has", () => {
  it("the parent's workspace caps bound a subagent's recipe", async () => {
    const said = ["short", "x".repeat(65)];
    harness.outbound.model = (c) =>
      c.tools.includes("delegate")
        ? chatToolCall("delegate", { subtasks: said.map((say) => ({ type: "echo_task", params: { say } })) }, c.model)
        : chatCompletion("done", c.model);
    const { task, stub } = await send("marker-researcher", "two echoes");
    await terminalPush(task.id);
    const rows = await runInDurableObject(stub, (_i, state) => state.storage.sql.exec("SELECT status, error FROM subtasks ORDER BY ordinal").toArray());
    // 65 bytes is over the parent's 64-byte cap; the subagent's own config sets none.
    expect(rows).toEqual([
      { status: "done", error: null },
      { status: "failed", error: expect.stringContaining("at most 64") },
    ]);
  });
});

describe("no turn ends in between", () => {
  it("a Workflow whose rounds come back neither terminal nor interrupted fails the task, in the agent's words, before announcing it", async () => {
    // Every round the Workflow allows (its guard, 64) says another follows, and none answers.
    await harness.workflows.modifyAll(async (m) => {
      for (let round = 1; round <= 64; round++) {
        await m.mockStepResult({ name: round === 1 ? "run" : `run round ${round}` }, { ok: true, value: { kind: "continue", announce: false } });
      }
    });
    const { task } = await send("marker", "end in between");
    const done = await terminalPush(task.id);
    expect(done.status.state).toBe("TASK_STATE_FAILED");
    expect(statusText(done)).toBe(mark("unfinished"));
    // The only push was the failed one: nothing announced the task half-way.
    expect(harness.outbound.pushes.filter((p) => p.body.task?.id === task.id).map((p) => p.body.task.status.state)).toEqual(["TASK_STATE_FAILED"]);
  });

  it("a round past the agent's budget is not run: the turn ends failed, unfinished", async () => {
    await harness.workflows.modifyAll(async (m) => m.mockStepError({ name: "run" }, new Error("the spec drives this turn")));
    const { task, stub } = await send("marker-researcher", "too many rounds");
    const agent: DrivenObject = driven(stub);
    await agent.turnStarted(task.id, ORIGIN);
    // The refused round's outcome is written in the same call.
    expect(await agent.runTurn(task.id, ORIGIN, 3, await openTurnOf(stub, task.id))).toMatchObject({
      ok: true,
      value: { kind: "finished", state: "TASK_STATE_FAILED" },
    });
    const failed = await agent.deliveryOf(task.id);
    expect(failed.ok && failed.value.task.status.message?.parts[0]?.text).toBe(mark("unfinished"));
    expect(harness.outbound.modelCalls).toHaveLength(0);
  });
});

describe("never twice at once", () => {
  it("a step retried while its first run is still in the object joins it: one model call, one verdict", async () => {
    await harness.workflows.modifyAll(async (m) => m.mockStepError({ name: "run" }, new Error("the spec drives this turn")));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    harness.outbound.model = async (c) => {
      await gate;
      return chatCompletion("once", c.model);
    };
    const { task, stub } = await send("marker", "run me once");
    const agent: DrivenObject = driven(stub);
    await agent.turnStarted(task.id, ORIGIN);
    const instanceId = await openTurnOf(stub, task.id);
    const first = agent.runTurn(task.id, ORIGIN, 1, instanceId);
    await eventually(
      () => harness.outbound.modelCalls.length,
      (n) => n === 1,
      "the first run's model call",
    );
    const second = agent.runTurn(task.id, ORIGIN, 1, instanceId);
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(a).toMatchObject({ ok: true, value: { kind: "finished", state: "TASK_STATE_COMPLETED" } });
    expect(b).toEqual(a);
    expect(harness.outbound.modelCalls).toHaveLength(1);
  });
});

describe("a run joined across instances", () => {
  it("a run joined by an instance the reconciler re-drove under a new id closes that instance's record too", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    harness.outbound.model = async (c) => {
      await gate;
      return chatCompletion("once", c.model);
    };
    const who = caller("marker");
    const object: CallerObject & DrivenObject = driven(who.stub);
    // No push config: the round's own call closes the turn's record, with no delivery step after it.
    const begun = await object.beginTask({
      tenant: "marker",
      origin: ORIGIN,
      message: { messageId: "m-joined", role: "ROLE_USER", parts: [{ text: "join me" }] },
    });
    if (!begun.ok || "message" in begun.value) throw new Error("not a task");
    const taskId = begun.value.task.id;
    const ledger = <T>(read: (db: AgentDB) => T) => runInDurableObject(who.stub, (_i, state) => read(new AgentDB(state.storage, TERMINAL_STATE_NAMES)));
    const first = await openTurnOf(who.stub, taskId);
    const running = object.runTurn(taskId, ORIGIN, 1, first);
    await eventually(
      () => harness.outbound.modelCalls.length,
      (n) => n === 1,
      "the first run's model call",
    );
    // The reconciler handed the turn to an announcing instance while the first run goes on here.
    await ledger((db) => db.turns.redriven(taskId, first, `${first}-final`, 60_000));
    const joining = object.runTurn(taskId, ORIGIN, 1, `${first}-final`);
    release();
    const [a, b] = await Promise.all([running, joining]);
    expect(a).toMatchObject({ ok: true, value: { kind: "finished", state: "TASK_STATE_COMPLETED", closed: true } });
    expect(b).toEqual(a);
    expect(harness.outbound.modelCalls).toHaveLength(1);
    // The joiner was told the record is closed, so its Workflow has no step that would close it later.
    expect(await ledger((db) => db.turns.get(taskId))).toBeUndefined();
  });
});

describe("bounded state", () => {
  it("refuses a turn past the caller's in-flight cap with 429 QUOTA_EXCEEDED and Retry-After, creating nothing", async () => {
    await harness.workflows.modifyAll(async (m) => m.mockStepError({ name: "run" }, new Error("held open")));
    const who = caller("marker");
    const object: CallerObject & DrivenObject = driven(who.stub);
    for (let i = 0; i < 32; i++) {
      const begun = await object.beginTask({
        tenant: "marker",
        origin: ORIGIN,
        message: { messageId: `m-${i}`, role: "ROLE_USER", parts: [{ text: "hold" }] },
      });
      expect(begun.ok).toBe(true);
    }
    const { fetch } = edge();
    const refused = await call("SendMessage", sendParams("one too many", "m-over"), { worker: fetch, mint: who.mint });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(refused.body.error).toMatchObject({ code: -32000, data: [{ reason: "QUOTA_EXCEEDED", domain: "dynamicagents.dev" }] });
    const listed = await call("ListTasks", {}, { worker: fetch, mint: who.mint });
    expect(listed.body.result.totalSize).toBe(32);
    // Nothing of it was kept: once a turn ends, the same messageId is a new task.
    const ended = listed.body.result.tasks[0].id;
    await object.turnDelivered(ended, await openTurnOf(who.stub, ended));
    const again = await call("SendMessage", sendParams("now there is room", "m-over"), { worker: fetch, mint: who.mint });
    expect(again.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
  });

  it("retention deletes exactly the finished, delivered tasks, and a retry of one's messageId is TaskNotFound and starts nothing", async () => {
    const who = caller("marker");
    const object: CallerObject & DrivenObject = driven(who.stub);
    const begin = async (messageId: string) => {
      const begun = await object.beginTask({
        tenant: "marker",
        origin: ORIGIN,
        message: { messageId, role: "ROLE_USER", parts: [{ text: "x" }] },
        pushConfig: { url: PUSH_URL },
      });
      if (!begun.ok || "message" in begun.value) throw new Error("not a task");
      return begun.value.task.id;
    };
    const delivered = await begin("m-delivered");
    const pending = await begin("m-pending");
    const working = await begin("m-working");
    const done = { state: "TASK_STATE_COMPLETED", text: "done" } as const;
    await object.finishTurn(delivered, done);
    await object.turnDelivered(delivered, await openTurnOf(who.stub, delivered));
    // Finished, its push not yet delivered: retention must wait.
    await object.finishTurn(pending, done);
    // Finished, its delivery given up less than a day ago: retention must wait too.
    const dead = await begin("m-dead");
    await object.finishTurn(dead, done);
    await object.deadLetter(dead, [{ configId: "c-1", seq: 3, status: 404, at: new Date().toISOString() }]);
    await object.turnDelivered(dead, await openTurnOf(who.stub, dead));
    await new Promise((resolve) => setTimeout(resolve, 5));

    const swept = await runInDurableObject(who.stub, (instance) => (instance as unknown as { sweepRetention(): Promise<unknown> }).sweepRetention());
    expect(swept).toEqual({ tasks: 1, messageIds: 0, conversations: 0 });
    expect((await object.getTask({ taskId: dead })).ok).toBe(true);
    expect((await object.getTask({ taskId: delivered })).ok).toBe(false);
    expect((await object.listPushConfigs(delivered)).ok).toBe(false);
    expect((await object.getTask({ taskId: pending })).ok).toBe(true);
    expect((await object.getTask({ taskId: working })).ok).toBe(true);
    const page = await object.listTasks({ pageSize: 10, includeArtifacts: false });
    expect(page.ok && page.value.totalSize).toBe(3);

    const retry = await object.beginTask({
      tenant: "marker",
      origin: ORIGIN,
      message: { messageId: "m-delivered", role: "ROLE_USER", parts: [{ text: "x" }] },
    });
    expect(retry).toMatchObject({ ok: false, error: { code: -32001 } });
    const after = await object.listTasks({ pageSize: 10, includeArtifacts: false });
    expect(after.ok && after.value.totalSize).toBe(3);
  });
});
