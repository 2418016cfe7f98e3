import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { A2A_EXTENSIONS_HEADER, ERASURE_EXTENSION, HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE, TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { turnInstanceId } from "@dynamicagents/core/boundary";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import retention from "../docs/retention.md?raw";
import { researchPolicy } from "../reference/policy.js";
import { captureConsole } from "./support/console-capture.js";
import { GATEKEEPER, ORIGIN, PUSH_URL } from "./support/constants.js";
import { chatCompletion, chatToolCall, eventually, holdModel, type ModelCall } from "./support/outbound.js";
import { restCall } from "./support/rest.js";
import { call, openStream, sendParams, userMessage } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";
import { AgentDB } from "../src/db/agent-db.js";
import { sweepOnce } from "../src/db/retention.js";
import { DAY_MS } from "../src/db/usage-store.js";

// Erasure (docs/retention.md "Erasure"), as a gatekeeper asks for it and as
// the caller's object holds the result: after `dynamicagents/DeleteContext`
// or `dynamicagents/DeleteCallerData`, no table of the live object (ours,
// the agents SDK's, a plugin's, its key-value store) holds anything of the
// erased scope beyond the documented hashes and totals, and every method
// answers as if its tasks never existed.

const harness = useTurnHarness();

type Caller = { identity: { key: string } };
const newCaller = (): Caller => ({ identity: { key: `caller-${crypto.randomUUID()}` } });
const idOf = (caller: Caller) => env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key }));
const objectOf = (caller: Caller) => env.ASSISTANT.get(idOf(caller));
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/** Every row of every table of the object (its own schema says which: ours, the SDK's, the plugins'), and its key-value store, as text. */
async function everything(stub: DurableObjectStub): Promise<Record<string, string[]>> {
  return runInDurableObject(stub, (_instance, state) => {
    const tables = state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'")
      .toArray()
      .map((row) => row.name);
    const rows: Record<string, string[]> = {};
    for (const table of tables)
      rows[table] = state.storage.sql
        .exec(`SELECT * FROM "${table}"`)
        .toArray()
        .map((row) => JSON.stringify(row));
    rows["(kv)"] = [...state.storage.kv.list()].map(([key, value]) => JSON.stringify([key, value]));
    return rows;
  });
}

/** The tables (and rows) in which any of `needles` appears. */
function holding(all: Record<string, string[]>, needles: readonly string[]): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const [table, rows] of Object.entries(all)) {
    const hits = rows.filter((row) => needles.some((needle) => row.includes(needle)));
    if (hits.length) found[table] = hits;
  }
  return found;
}

const toolMessages = (c: ModelCall) => c.messages.filter((m) => m.role === "tool");

/** The assistant's model: saves a note (which waits for approval) when asked to remember, answers otherwise. */
function noteTaker() {
  harness.outbound.model = (c) => {
    const last = JSON.stringify(c.messages.at(-1)?.content ?? "");
    if (last.includes("remember") && toolMessages(c).length === 0) return chatToolCall("save_note", { text: last.slice(1, 60) }, c.model);
    return chatCompletion(`answer to ${JSON.stringify(c.messages.filter((m) => m.role === "user").map((m) => m.content))}`, c.model);
  };
}

const finished = async (taskId: string) =>
  (await eventually(
    () => harness.outbound.pushes.find((p) => p.body.task?.id === taskId && p.body.task.status.state !== "TASK_STATE_INPUT_REQUIRED"),
    (p) => p !== undefined,
    "the terminal push",
  ))!.body.task;

/** One turn in `contextId` (a new one if absent): its task, once finished, and the messageIds sent for it. */
async function turn(caller: Caller, text: string, contextId?: string) {
  const messageId = crypto.randomUUID();
  const params = sendParams(text, messageId);
  const sent = (await call("SendMessage", { ...params, message: { ...params.message, ...(contextId ? { contextId } : {}) } }, { mint: caller })).body.result
    .task;
  const messageIds = [messageId];
  const waiting = await eventually(
    async () => (await call("GetTask", { id: sent.id }, { mint: caller })).body.result,
    (t) => t.status.state !== "TASK_STATE_SUBMITTED" && t.status.state !== "TASK_STATE_WORKING",
    "the turn to stop",
  );
  if (waiting.status.state === "TASK_STATE_INPUT_REQUIRED") {
    const request = waiting.status.message.parts.find((p: { data?: { type?: string } }) => p.data?.type === HITL_REQUEST_TYPE).data;
    const answerId = crypto.randomUUID();
    messageIds.push(answerId);
    const answer = {
      messageId: answerId,
      role: "ROLE_USER",
      taskId: sent.id,
      parts: [{ data: { type: HITL_RESPONSE_TYPE, requestId: request.requestId, optionId: "approve" } }],
    };
    await call("SendMessage", { message: answer, configuration: { returnImmediately: true } }, { mint: caller });
  }
  return { task: await finished(sent.id), messageIds };
}

const erase = (caller: Caller, contextId: string, headers?: Record<string, string>) =>
  call("dynamicagents/DeleteContext", { contextId }, { mint: caller, headers });

describe("DeleteContext", () => {
  it("leaves nothing of the context in any table of the live object, beyond the documented hashes, and keeps the caller's other context", async () => {
    noteTaker();
    const caller = newCaller();
    const erased = `words-${crypto.randomUUID()}`;
    const kept = `words-${crypto.randomUUID()}`;
    const first = await turn(caller, `remember ${erased}`);
    const contextId = first.task.contextId;
    const second = await turn(caller, `more ${erased}`, contextId);
    const other = await turn(caller, `other ${kept}`);
    // Another caller naming the same contextId has a conversation of its own, which no erasure of this caller reaches.
    const stranger = newCaller();
    const theirs = await turn(stranger, `theirs ${kept}`, contextId);

    const before = await everything(objectOf(caller));
    expect(Object.keys(holding(before, [erased]))).toEqual(
      expect.arrayContaining(["tasks", "task_events", "conversation_entries", "tool_calls", "notes_items"]),
    );

    const reply = await erase(caller, contextId);
    expect(reply.status).toBe(200);
    expect(reply.body.result).toEqual({
      erased: { tasks: 2, events: expect.any(Number), messages: expect.any(Number), toolCalls: 1, hitlRequests: 1, pushConfigs: 2, subagents: 0, plugins: 1 },
      unerased: [],
    });
    expect(reply.body.result.erased.events).toBeGreaterThanOrEqual(8);
    expect(reply.body.result.erased.messages).toBeGreaterThanOrEqual(6);

    const after = await everything(objectOf(caller));
    const ids = [contextId, first.task.id, second.task.id, ...first.messageIds, ...second.messageIds, erased];
    expect(holding(after, ids)).toEqual({});
    // What stays: one keyed hash per erased messageId, which names none of them.
    expect(after.erased_messages).toHaveLength(first.messageIds.length + second.messageIds.length);
    // The other context is whole.
    expect(Object.keys(holding(after, [other.task.id, kept]))).toEqual(expect.arrayContaining(["tasks", "task_events", "conversation_entries"]));
    expect(holding(await everything(objectOf(stranger)), [theirs.task.id, contextId, kept])).not.toEqual({});
  });
});

describe("after an erasure", () => {
  it("every method answers as if the context's tasks never existed; a retried messageId starts nothing; the contextId starts an empty conversation", async () => {
    noteTaker();
    const caller = newCaller();
    const secret = `words-${crypto.randomUUID()}`;
    const { task, messageIds } = await turn(caller, `say ${secret}`);
    const other = await turn(caller, "elsewhere");
    expect((await erase(caller, task.contextId)).body.result.erased.tasks).toBe(1);

    const refusal = async (method: string, params: Record<string, unknown>) => (await call(method, params, { mint: caller })).body.error?.code;
    expect(await refusal("GetTask", { id: task.id })).toBe(-32001);
    expect(await refusal("CancelTask", { id: task.id })).toBe(-32001);
    expect(await refusal("ListTaskPushNotificationConfigs", { taskId: task.id })).toBe(-32001);
    expect(await refusal("CreateTaskPushNotificationConfig", { taskId: task.id, url: PUSH_URL })).toBe(-32001);
    const subscribed = await openStream("SubscribeToTask", { id: task.id }, { mint: caller, headers: { "Last-Event-ID": "0" } });
    expect(subscribed.reply?.error?.code).toBe(-32001);
    const listed = (await call("ListTasks", { contextId: task.contextId }, { mint: caller })).body.result;
    expect(listed).toMatchObject({ tasks: [], totalSize: 0 });
    const all = (await call("ListTasks", {}, { mint: caller })).body.result;
    expect(all.tasks.map((t: { id: string }) => t.id)).toEqual([other.task.id]);
    expect(all.totalSize).toBe(1);
    // A message naming the erased task is TaskNotFound.
    expect(await refusal("SendMessage", { message: userMessage("and?", undefined, { taskId: task.id }) })).toBe(-32001);

    // A retry of the erased task's messageId starts nothing: no task, no model call.
    const calls = harness.outbound.modelCalls.length;
    const retry = sendParams(`say ${secret}`, messageIds[0]);
    expect(await refusal("SendMessage", retry)).toBe(-32001);
    expect(await refusal("SendMessage", { ...retry, message: { ...retry.message, parts: [{ text: "something else" }] } })).toBe(-32001);
    await settle();
    expect(harness.outbound.modelCalls).toHaveLength(calls);
    expect((await call("ListTasks", {}, { mint: caller })).body.result.totalSize).toBe(1);

    // The contextId again: a new task, and the model reads none of the erased words.
    const again = await turn(caller, "fresh start", task.contextId);
    expect(again.task.contextId).toBe(task.contextId);
    expect(JSON.stringify(harness.outbound.modelCalls.at(-1)!.messages)).not.toContain(secret);
  });

  it("a repeat answers zero counts, and the extension is echoed only to a request that activated it", async () => {
    const caller = newCaller();
    const { task } = await turn(caller, "hello");
    const first = await erase(caller, task.contextId);
    expect(first.body.result.erased.tasks).toBe(1);
    expect(first.headers.get(A2A_EXTENSIONS_HEADER)).toBeNull();
    const repeat = await erase(caller, task.contextId, { [A2A_EXTENSIONS_HEADER]: `https://example.com/other, ${ERASURE_EXTENSION}` });
    expect(repeat.body.result).toEqual({
      erased: { tasks: 0, events: 0, messages: 0, toolCalls: 0, hitlRequests: 0, pushConfigs: 0, subagents: 0, plugins: 0 },
      unerased: [],
    });
    expect(repeat.headers.get(A2A_EXTENSIONS_HEADER)).toBe(ERASURE_EXTENSION);
    // A context this caller never had: the same zeros.
    expect((await erase(caller, "never-seen")).body.result.erased.tasks).toBe(0);
  });

  it("refuses a DeleteContext without a contextId with -32602, and erases nothing", async () => {
    const caller = newCaller();
    const { task } = await turn(caller, "keep me");
    expect((await call("dynamicagents/DeleteContext", {}, { mint: caller })).body.error.code).toBe(-32602);
    expect((await call("dynamicagents/DeleteContext", { contextId: "" }, { mint: caller })).body.error.code).toBe(-32602);
    expect((await call("GetTask", { id: task.id }, { mint: caller })).body.result.id).toBe(task.id);
  });
});

describe("a running turn of an erased context", () => {
  it("is stopped unannounced: its model call aborted, its stream closed after a last comment, its Workflow terminated, no push, no canceled event", async () => {
    using captured = captureConsole();
    const held = holdModel(harness.outbound);
    const caller = newCaller();
    const messageId = crypto.randomUUID();
    const send = { message: userMessage("a long question", messageId), configuration: { taskPushNotificationConfig: { url: PUSH_URL, token: "t" } } };
    const stream = await openStream("SendStreamingMessage", send, { mint: caller });
    const events = stream.events[Symbol.asyncIterator]();
    const task = (await events.next()).value!.reply.result.task;
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call to start",
    );

    expect((await erase(caller, task.contextId)).body.result.erased.tasks).toBe(1);
    await eventually(
      () => held[0]!.call.signal.aborted,
      (aborted) => aborted,
      "the model call to see the abort",
    );
    for (let next = await events.next(); !next.done; next = await events.next())
      expect(next.value.reply.result.statusUpdate?.status?.state).toBe("TASK_STATE_WORKING");
    expect(stream.closing).toBe("the task was erased");
    const instance = await env.TURN_WORKFLOW.get(await turnInstanceId(idOf(caller).toString(), messageId));
    await eventually(
      async () => (await instance.status()).status,
      (status) => status === "terminated" || status === "complete",
      "the turn's Workflow to end",
    );
    held[0]!.release("too late");
    await settle();
    expect(harness.outbound.pushes.filter((p) => (p.body.task?.id ?? p.body.statusUpdate?.taskId) === task.id)).toEqual([]);
    expect(captured.events().filter((e) => e.taskId === task.id && e.event === "task.canceled")).toEqual([]);
    expect(captured.events().filter((e) => e.event === "erasure.done")).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ scope: "context", tasks: 1 }) }),
    ]);
    expect(JSON.stringify(captured.events().find((e) => e.event === "erasure.done"))).not.toContain(task.contextId);
  });

  it("a turn waiting for a human: its Workflow is terminated, and a Workflow woken for the erased task later ends without a push", async () => {
    noteTaker();
    const caller = newCaller();
    const messageId = crypto.randomUUID();
    const task = (await call("SendMessage", sendParams("remember the milk", messageId), { mint: caller })).body.result.task;
    await eventually(
      () => harness.outbound.pushes.find((p) => p.body.statusUpdate?.taskId === task.id),
      (p) => p !== undefined,
      "the input-required push",
    );
    const pushed = harness.outbound.pushes.length;
    await erase(caller, task.contextId);
    const instance = await env.TURN_WORKFLOW.get(await turnInstanceId(idOf(caller).toString(), messageId));
    await eventually(
      async () => (await instance.status()).status,
      (status) => status === "terminated",
      "the parked turn's Workflow to be terminated",
    );
    // A Workflow that runs for the erased task after all (an edge's late start, a re-drive) finds no task: it ends, pushing nothing.
    const woken = await env.TURN_WORKFLOW.create({
      id: `woken-${crypto.randomUUID()}`,
      params: { tenant: "assistant", agentId: idOf(caller).toString(), taskId: task.id, messageId, origin: ORIGIN },
    });
    await eventually(
      async () => (await woken.status()).status,
      (status) => status === "complete",
      "the woken Workflow to end",
    );
    expect(harness.outbound.pushes).toHaveLength(pushed);
  });
});

describe("DeleteCallerData", () => {
  it("leaves only today's and yesterday's token totals and the documented hashes: every read answers like a new caller's", async () => {
    noteTaker();
    const caller = newCaller();
    const words = `words-${crypto.randomUUID()}`;
    const one = await turn(caller, `remember ${words}`);
    const two = await turn(caller, `other ${words}`);
    // An older day's total, which is history, not a budget.
    await runInDurableObject(objectOf(caller), (_i, state) =>
      state.storage.sql.exec("INSERT INTO usage_days (day, input_tokens, output_tokens, model_calls) VALUES ('2020-01-01', 5, 5, 1)"),
    );
    const spentToday = await runInDurableObject(objectOf(caller), (_i, state) =>
      state.storage.sql.exec<{ day: string; input_tokens: number }>("SELECT day, input_tokens FROM usage_days WHERE day <> '2020-01-01'").toArray(),
    );

    const reply = await call("dynamicagents/DeleteCallerData", {}, { mint: caller });
    expect(reply.body.result).toMatchObject({ erased: { tasks: 2, plugins: 1, hitlRequests: 1, toolCalls: 1 }, unerased: [] });

    const left = await everything(objectOf(caller));
    const ids = [one.task.contextId, two.task.contextId, one.task.id, two.task.id, ...one.messageIds, ...two.messageIds, words, caller.identity.key];
    expect(holding(left, ids)).toEqual({});
    const nonEmpty = Object.fromEntries(Object.entries(left).filter(([, rows]) => rows.length > 0));
    expect(Object.keys(nonEmpty).sort()).toEqual([
      "(kv)",
      "__drizzle_migrations",
      "cf_agents_jobs",
      "erased_messages",
      "erasure_key",
      "plugin_migrations",
      "usage_days",
    ]);
    expect(nonEmpty.usage_days!.map((row) => JSON.parse(row) as { day: string; input_tokens: number })).toEqual(
      spentToday.map((day) => expect.objectContaining(day)),
    );
    expect(nonEmpty.erased_messages).toHaveLength(one.messageIds.length + two.messageIds.length);
    // The object's own key-value store: who it is in its events (the tenant and the caller's keyed hash), and the SDK's schema versions.
    const kv = nonEmpty["(kv)"]!.map((row) => (JSON.parse(row) as [string])[0]);
    expect(kv.filter((key) => !key.startsWith("cf_agents:") || !key.endsWith("schema_version"))).toEqual(["telemetry.scope"]);

    expect((await call("ListTasks", {}, { mint: caller })).body.result).toMatchObject({ tasks: [], totalSize: 0, nextPageToken: "" });
    expect((await call("GetTask", { id: one.task.id }, { mint: caller })).body.error.code).toBe(-32001);
    expect((await call("SendMessage", sendParams("again", one.messageIds[0]), { mint: caller })).body.error.code).toBe(-32001);
    expect((await call("dynamicagents/DeleteCallerData", {}, { mint: caller })).body.result.erased).toEqual({
      tasks: 0,
      events: 0,
      messages: 0,
      toolCalls: 0,
      hitlRequests: 0,
      pushConfigs: 0,
      subagents: 0,
      plugins: 0,
    });
  });
});

describe("the HTTP+JSON routes", () => {
  it("DELETE /{tenant}/contexts/{contextId} and DELETE /{tenant}/caller answer as the JSON-RPC methods do", async () => {
    const caller = newCaller();
    const contextId = `a context/with: odd characters ${crypto.randomUUID()}`;
    const { task } = await turn(caller, "first", contextId);
    const other = await turn(caller, "second");
    const context = await restCall("dynamicagents/DeleteContext", { contextId }, { mint: caller, headers: { [A2A_EXTENSIONS_HEADER]: ERASURE_EXTENSION } });
    expect(context.status).toBe(200);
    expect(context.body).toMatchObject({ erased: { tasks: 1 }, unerased: [] });
    expect(context.headers.get(A2A_EXTENSIONS_HEADER)).toBe(ERASURE_EXTENSION);
    expect((await call("GetTask", { id: task.id }, { mint: caller })).body.error.code).toBe(-32001);
    const everything = await restCall("dynamicagents/DeleteCallerData", {}, { mint: caller });
    expect(everything.body).toMatchObject({ erased: { tasks: 1 }, unerased: [] });
    expect((await call("GetTask", { id: other.task.id }, { mint: caller })).body.error.code).toBe(-32001);
    // A route naming no tenant is refused before any object is asked; so is a GET of the route.
    expect((await restCall("dynamicagents/DeleteCallerData", {}, { mint: caller, tenant: null })).status).toBe(401);
    expect((await restCall("dynamicagents/DeleteCallerData", {}, { mint: caller, verb: "GET" })).status).toBe(405);
  });
});

describe("retention", () => {
  it("deletes a conversation nobody added to for conversationIdleDays, whole, and keeps one whose turn is still open", async () => {
    noteTaker();
    const caller = newCaller();
    const idle = await turn(caller, "long ago");
    const waiting = (await call("SendMessage", sendParams("remember the milk"), { mint: caller })).body.result.task;
    await eventually(
      async () => (await call("GetTask", { id: waiting.id }, { mint: caller })).body.result.status.state,
      (state) => state === "TASK_STATE_INPUT_REQUIRED",
      "the open turn to wait",
    );
    const entriesOf = (contextId: string) =>
      runInDurableObject(
        objectOf(caller),
        (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM conversation_entries WHERE conversation_id = ?", contextId).one().n,
      );
    expect(await entriesOf(idle.task.contextId)).toBeGreaterThan(0);
    // Two days on, with conversations kept one idle day.
    const swept = await runInDurableObject(objectOf(caller), (_i, state) =>
      sweepOnce(
        new AgentDB(state.storage, TERMINAL_STATE_NAMES),
        { finishedTaskDays: 3650, messageIdDays: 3650, conversationIdleDays: 1 },
        Date.now() + 2 * DAY_MS,
        async () => {},
      ),
    );
    expect(swept.conversations).toBe(1);
    expect(await entriesOf(idle.task.contextId)).toBe(0);
    expect(await entriesOf(waiting.contextId)).toBeGreaterThan(0);
    // The next message in that context starts an empty conversation.
    const again = await turn(caller, "and now", idle.task.contextId);
    expect(JSON.stringify(harness.outbound.modelCalls.at(-1)!.messages)).not.toContain("long ago");
    expect(again.task.contextId).toBe(idle.task.contextId);
  });
});

describe("docs/retention.md", () => {
  it("names every table of a live object (core's, the agents SDK's, a plugin's), and none that no object has", async () => {
    // The assistant, after a note was saved (its plugin's table); the researcher, after a round that delegated (its subagents' registry).
    noteTaker();
    const assistant = newCaller();
    await turn(assistant, "remember the retention table");
    const page = "https://developers.cloudflare.com/retention";
    harness.outbound.pages.set(page, () => new Response("<p>It says 42.</p>"));
    harness.outbound.model = (c) => {
      const delegated = c.messages.some((m) => String(m.content ?? "").startsWith(researchPolicy.rounds!.resultsHeader));
      if (c.tools.includes("delegate") && !delegated)
        return chatToolCall("delegate", { subtasks: [{ type: "read_page", params: { url: page, question: "what?" } }] }, c.model);
      return chatCompletion("42", c.model);
    };
    const researcher = { tenant: "researcher", identity: { key: `caller-${crypto.randomUUID()}` } };
    const task = (await call("SendMessage", sendParams("research it"), { mint: researcher })).body.result.task;
    await finished(task.id);

    const tablesOf = (stub: DurableObjectStub) =>
      runInDurableObject(stub, (_i, state) =>
        state.storage.sql
          .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
          .toArray()
          .map((row) => row.name),
      );
    const researcherStub = env.RESEARCHER.get(
      env.RESEARCHER.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "researcher", key: researcher.identity.key })),
    );
    const live = new Set([...(await tablesOf(objectOf(assistant))), ...(await tablesOf(researcherStub))]);
    const section = retention.slice(retention.indexOf("\n## Every table\n"), retention.indexOf("\n## Outside the object\n"));
    const documented = new Set([...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]!));
    expect([...documented].sort()).toEqual([...live].sort());
  });
});
