import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { HITL_REQUEST_TYPE, TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import { AgentDB } from "../src/db/agent-db.js";
import { captureConsole } from "./support/console-capture.js";
import { GATEKEEPER } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { call, sendParams, userMessage } from "./support/rpc.js";
import { useMarkerHarness } from "./support/turn-harness.js";

// Erasure of the specs' own agents (test/support/agents.ts): the subagents of
// a delegating turn, a plugin store made before erasure, direct replies, a
// budget that stays spent, and an erasure a reset cut short.

const harness = useMarkerHarness();
const edge = markerEdge();

type Tenant = "marker" | "marker-researcher" | "observed";
const namespaceOf = (tenant: Tenant) => ({ marker: env.MARKER_AGENT, "marker-researcher": env.MARKER_RESEARCHER, observed: env.MARKER_OBSERVED })[tenant]!;

function newCaller(tenant: Tenant = "marker") {
  const key = `caller-${crypto.randomUUID()}`;
  const ns = namespaceOf(tenant);
  return { mint: { tenant, identity: { key } }, stub: ns.get(ns.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant, key }))) };
}
type Caller = ReturnType<typeof newCaller>;
const rpc = (method: string, params: Record<string, unknown>, who: Caller) => call(method, params, { worker: edge.fetch, mint: who.mint });

const finished = async (taskId: string) =>
  (await eventually(
    () => harness.outbound.pushes.find((p) => p.body.task?.id === taskId),
    (p) => p !== undefined,
    "the terminal push",
  ))!.body.task;

describe("erasure, beyond the caller's own tables", () => {
  it("deletes the subagents of the context's subtasks with their storage", async () => {
    harness.outbound.model = (c: ModelCall) =>
      c.tools.includes("delegate")
        ? chatToolCall("delegate", { subtasks: [{ type: "ask_task", params: { about: "which" } }] }, c.model)
        : chatCompletion("done", c.model);
    const who = newCaller("marker-researcher");
    const task = (await rpc("SendMessage", sendParams("research it"), who)).body.result.task;
    const waiting = await eventually(
      async () => (await rpc("GetTask", { id: task.id }, who)).body.result,
      (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED",
      "the subtask's question",
    );
    expect(waiting.status.message.parts.some((p: { data?: { type?: string } }) => p.data?.type === HITL_REQUEST_TYPE)).toBe(true);
    const subtaskId = await runInDurableObject(who.stub, (_i, state) => state.storage.sql.exec<{ id: string }>("SELECT id FROM subtasks").one().id);
    const facets = () =>
      runInDurableObject(who.stub, (instance) =>
        (instance as unknown as { dynamicAgents: { has(cls: string, id: string): boolean } }).dynamicAgents.has("MarkerSubagent", subtaskId),
      );
    expect(await facets()).toBe(true);

    const reply = await rpc("dynamicagents/DeleteContext", { contextId: task.contextId }, who);
    expect(reply.body.result.erased).toMatchObject({ tasks: 1, subagents: 1, hitlRequests: 1 });
    expect(await facets()).toBe(false);
  });

  it("names a plugin store without an erasure hook, with its rows, under unerased", async () => {
    const who = newCaller();
    const task = (await rpc("SendMessage", sendParams("hello"), who)).body.result.task;
    await finished(task.id);
    const reply = await rpc("dynamicagents/DeleteContext", { contextId: task.contextId }, who);
    expect(reply.body.result.unerased).toEqual([{ plugin: "keeper", rows: 1 }]);
    expect((await rpc("dynamicagents/DeleteCallerData", {}, who)).body.result.unerased).toEqual([{ plugin: "keeper", rows: 1 }]);
  });

  it("forgets the context's direct replies, and a retry of one is TaskNotFound", async () => {
    const who = newCaller();
    const messageId = crypto.randomUUID();
    const contextId = `ctx-${crypto.randomUUID()}`;
    const answered = await rpc("SendMessage", { message: userMessage("say it #message", messageId, { contextId }) }, who);
    expect(answered.body.result.message.contextId).toBe(contextId);
    await rpc("dynamicagents/DeleteContext", { contextId }, who);
    const rows = await runInDurableObject(who.stub, (_i, state) => state.storage.sql.exec("SELECT * FROM direct_replies").toArray());
    expect(rows).toEqual([]);
    expect((await rpc("SendMessage", { message: userMessage("say it #message", messageId, { contextId }) }, who)).body.error.code).toBe(-32001);
  });

  it("keeps today's token total: a caller past its daily budget is still refused after erasing everything", async () => {
    const who = newCaller("observed");
    // The observed agent's budget is 6 tokens a day, 2 a call: three turns spend it.
    for (let i = 0; i < 3; i++) await finished((await rpc("SendMessage", sendParams(`turn ${i}`), who)).body.result.task.id);
    expect((await rpc("SendMessage", sendParams("one more"), who)).body.error.code).toBe(-32000);
    expect((await rpc("dynamicagents/DeleteCallerData", {}, who)).body.result.erased.tasks).toBe(3);
    const refused = await rpc("SendMessage", sendParams("and now?"), who);
    expect(refused.status).toBe(429);
    expect(refused.body.error.data[0].metadata.limit).toBe("tokensPerCallerPerDay");
  });
});

describe("an erasure a reset cut short", () => {
  it("is finished on the object's next wake, before any call is answered: none sees the context half erased", async () => {
    using captured = captureConsole();
    const who = newCaller();
    // A context of 150 tasks (two batches of the erasure) and another one, written as the object keeps them.
    const crashed = await runInDurableObject(who.stub, async (_instance, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      const task = (id: string, contextId: string) =>
        JSON.stringify({ id, contextId, status: { state: "TASK_STATE_COMPLETED", timestamp: new Date().toISOString() } });
      for (let i = 0; i < 150; i++)
        db.tasks.insert({
          id: `big-${i}`,
          messageId: `m-big-${i}`,
          contextId: "big",
          state: "TASK_STATE_COMPLETED",
          statusAt: i,
          json: task(`big-${i}`, "big"),
        });
      db.tasks.insert({
        id: "small-0",
        messageId: "m-small-0",
        contextId: "small",
        state: "TASK_STATE_COMPLETED",
        statusAt: 1,
        json: task("small-0", "small"),
      });
      // The erasure's first batch goes in; the isolate dies in its second.
      const record = db.erasures.begin({ kind: "context", contextId: "big" });
      const hashes = await db.erasures.hashesOf(record.scope);
      let batches = 0;
      const hooks = {
        subagentsOf: () => [],
        plugins: () => {
          if (++batches === 2) throw new Error("the isolate died");
          return 0;
        },
      };
      try {
        db.eraseRows(record, hashes, hooks);
      } catch (error) {
        return (error as Error).message;
      }
      return "no crash";
    });
    expect(crashed).toBe("the isolate died");
    const left = await runInDurableObject(
      who.stub,
      (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM tasks WHERE context_id = 'big'").one().n,
    );
    expect(left).toBe(50);

    await evictDurableObject(who.stub);
    // The first call after the reset: the erasure is finished before it is answered.
    expect((await rpc("GetTask", { id: "big-149" }, who)).body.error.code).toBe(-32001);
    expect((await rpc("ListTasks", { contextId: "big" }, who)).body.result).toMatchObject({ tasks: [], totalSize: 0 });
    expect((await rpc("GetTask", { id: "small-0" }, who)).body.result.id).toBe("small-0");
    const after = await runInDurableObject(who.stub, (_i, state) => ({
      tasks: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM tasks").one().n,
      records: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM erasures").one().n,
      hashes: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM erased_messages").one().n,
    }));
    expect(after).toEqual({ tasks: 1, records: 0, hashes: 150 });
    expect(captured.events().filter((e) => e.event === "erasure.done")).toEqual([expect.objectContaining({ data: expect.objectContaining({ tasks: 150 }) })]);
    expect((await rpc("SendMessage", sendParams("again", "m-big-7"), who)).body.error.code).toBe(-32001);
  });
});

describe("the caller's object's rows of an erasure", () => {
  /** A fresh object's tables, for rows written as the stores write them. */
  const freshDb = <T>(work: (db: AgentDB, sql: SqlStorage) => T | Promise<T>) =>
    runInDurableObject(newCaller().stub, (_i, state) => work(new AgentDB(state.storage, TERMINAL_STATE_NAMES), state.storage.sql));
  const insertTask = (db: AgentDB, id: string, contextId: string) =>
    db.tasks.insert({ id, messageId: `m-${id}`, contextId, state: "TASK_STATE_WORKING", statusAt: 1, json: JSON.stringify({ id, contextId }) });
  const eraseContext = async (db: AgentDB, contextId: string) => {
    const record = db.erasures.begin({ kind: "context", contextId });
    return db.eraseRows(record, await db.erasures.hashesOf(record.scope), { subagentsOf: () => [], plugins: () => 0 });
  };
  const count = (sql: SqlStorage, table: string) => sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table}`).one().n;

  it("a turn's writes land only while its task exists: a step still running after the erasure writes nothing", async () => {
    const left = await freshDb(async (db, sql) => {
      insertTask(db, "t-1", "c-1");
      await eraseContext(db, "c-1");
      // What a round still running writes as it goes on.
      db.appendEvent("t-1", { kind: "artifact", json: "{}" });
      db.conversations.append("c-1", "t-1", "t-1:late", { role: "assistant", content: "late words" });
      db.toolCalls.start("t-1", "k-1", "save_note");
      const opened = db.hitl.open({ requestId: "r-1", taskId: "t-1", round: 1, request: {}, target: {}, expiresAt: Date.now() + 1_000 });
      const status = db.writeTask({ id: "t-1", state: "TASK_STATE_COMPLETED", statusAt: 2, json: "{}" }, { kind: "status", json: "{}" });
      const delegated = (() => {
        try {
          db.subtasks.delegate("t-1", 1, [{ id: "s-1", type: "x", params: {}, fingerprint: "f" }], 4);
          return "recorded";
        } catch (error) {
          return (error as Error).message;
        }
      })();
      const tables = ["task_events", "conversation_entries", "tool_calls", "hitl_requests", "subtasks", "rounds", "tasks"];
      return { opened, status: status.kind, delegated, rows: Object.fromEntries(tables.map((t) => [t, count(sql, t)])) };
    });
    expect(left.opened).toBeUndefined();
    expect(left.status).toBe("missing");
    expect(left.delegated).toMatch(/FOREIGN KEY/);
    expect(left.rows).toEqual({ task_events: 0, conversation_entries: 0, tool_calls: 0, hitl_requests: 0, subtasks: 0, rounds: 0, tasks: 0 });
  });

  it("in the per-caller conversation, erasing a context deletes its words, those of its tasks retention took, and the caller's summary", async () => {
    const left = await freshDb(async (db, sql) => {
      for (const [task, context] of [
        ["a-1", "ctx-a"],
        ["a-2", "ctx-a"],
        ["b-1", "ctx-b"],
      ] as const) {
        insertTask(db, task, context);
        db.conversations.append("caller", task, `${task}:u`, { role: "user", content: `words of ${task}` });
        db.conversations.commit(task);
      }
      // Retention took a-2 (its entries stay in the conversation), and a compaction wrote the caller's summary.
      sql.exec("DELETE FROM tasks WHERE id = 'a-2'");
      const first = sql.exec<{ id: number }>("SELECT id FROM conversation_entries WHERE task_id = 'a-1'").one().id;
      db.conversations.claimCompaction("caller", Date.now() + 60_000);
      db.conversations.folded("caller", { text: "summary holding the words of a-1" }, first);
      const summaries = count(sql, "conversation_entries WHERE kind = 'summary'");
      const record = await eraseContext(db, "ctx-a");
      const entries = sql
        .exec<{ task_id: string; kind: string }>("SELECT task_id, kind FROM conversation_entries ORDER BY id")
        .toArray()
        .map((r) => `${r.kind}:${r.task_id}`);
      return { summaries, entries, counts: record.counts, state: count(sql, "conversation_state") };
    });
    // a-1's entry was folded into the summary; the summary and a-2's entry (its task gone) went with the context.
    expect(left.summaries).toBe(1);
    expect(left.entries).toEqual(["message:b-1"]);
    expect(left.state).toBe(0);
    expect(left.counts).toMatchObject({ tasks: 1, messages: 2 });
  });
});
