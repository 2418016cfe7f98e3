import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import type { BeginTask, CallerObject } from "@dynamicagents/core/boundary";
import { AgentDB } from "@dynamicagents/core/db";
import { sweepOnce } from "../src/db/retention.js";
import { describe, expect, it } from "vitest";
import { ORIGIN, PUSH_URL } from "./support/constants.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, userMessage } from "./support/rpc.js";
import { driven, type DrivenObject } from "./support/turns.js";

const pushConfig = { url: PUSH_URL, token: "t" };

/**
 * A fresh caller's object, through the boundary the edge and the Workflow use
 * (real RPC into its Durable Object, its SQLite migrated by the constructor).
 */
function freshAgent(): CallerObject & DrivenObject & { id: DurableObjectId } {
  return driven(env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID())));
}
type Agent = ReturnType<typeof freshAgent>;

const beginInput = (messageId = crypto.randomUUID(), extra: Record<string, unknown> = {}): BeginTask => ({
  tenant: "assistant",
  origin: ORIGIN,
  message: userMessage("hi", messageId, extra),
  pushConfig,
});

async function begin(agent: Agent, messageId = crypto.randomUUID(), extra: Record<string, unknown> = {}) {
  const verdict = await agent.beginTask(beginInput(messageId, extra));
  if (!verdict.ok) throw new Error(verdict.error.message);
  if ("message" in verdict.value) throw new Error("the assistant answered with a message, not a task");
  return verdict.value;
}

/** A task made terminal through the Workflow's guarded write, as a finished turn does it. */
const complete = (agent: Agent, taskId: string) => agent.finishTurn(taskId, { state: "TASK_STATE_COMPLETED", text: "done" });

describe("the task lifecycle in the caller's Durable Object", () => {
  it("records a submitted task holding the message, and names its turn", async () => {
    const agent = freshAgent();
    const { task, turn } = await begin(agent, "m-1");
    expect(turn?.params).toMatchObject({ taskId: task.id, messageId: "m-1", tenant: "assistant", origin: ORIGIN });
    expect(task).toMatchObject({ status: { state: "TASK_STATE_SUBMITTED" }, history: [{ messageId: "m-1", taskId: task.id }] });
    const stored = await agent.getTask({ taskId: task.id });
    expect(stored.ok && stored.value).toEqual(task);
  });

  it("is idempotent on messageId, also under concurrency: one task, one turn, named again to every retry while it is open", async () => {
    const agent = freshAgent();
    const results = await Promise.all(Array.from({ length: 10 }, () => begin(agent, "same")));
    expect(new Set(results.map((r) => r.task.id)).size).toBe(1);
    // Every retry names the same instance: starting it again is a no-op, and restarts one that never appeared.
    expect(new Set(results.map((r) => r.turn?.instanceId)).size).toBe(1);
    expect(results[0]!.turn).toBeDefined();
    // Once the turn is delivered, a retry names nothing.
    await agent.turnDelivered(results[0]!.task.id, results[0]!.turn!.instanceId);
    expect((await begin(agent, "same")).turn).toBeUndefined();
    const page = await agent.listTasks({ pageSize: 100, includeArtifacts: false });
    expect(page.ok && page.value.totalSize).toBe(1);
  });

  it("refuses the terminal write once a task is canceled, and says what it is", async () => {
    const agent = freshAgent();
    const { task } = await begin(agent);
    expect((await agent.turnStarted(task.id, ORIGIN)).ok).toBe(true);
    const canceled = await agent.cancelTask(task.id);
    expect(canceled.ok && canceled.value.status).toMatchObject({ state: "TASK_STATE_CANCELED" });
    const late = await complete(agent, task.id);
    expect(late).toEqual({ ok: true, value: { saved: false, state: "TASK_STATE_CANCELED" } });
    const stored = await agent.getTask({ taskId: task.id });
    expect(stored.ok && stored.value.status).toMatchObject({ state: "TASK_STATE_CANCELED" });
  });

  it("refuses to cancel a terminal task with -32002 and an unknown one with -32001", async () => {
    const agent = freshAgent();
    const { task } = await begin(agent);
    await complete(agent, task.id);
    const again = await agent.cancelTask(task.id);
    expect(again.ok ? undefined : again.error.code).toBe(-32002);
    const missing = await agent.cancelTask("nope");
    expect(missing.ok ? undefined : missing.error.code).toBe(-32001);
  });

  it("answers every call about an unknown task with TaskNotFound", async () => {
    const agent = freshAgent();
    for (const verdict of [
      await agent.getTask({ taskId: "ghost" }),
      await complete(agent, "ghost"),
      await agent.turnStarted("ghost", ORIGIN),
      await agent.runTurn("ghost", ORIGIN, 1, "ghost-turn"),
      await agent.deliveryOf("ghost"),
      await agent.listPushConfigs("ghost"),
    ]) {
      expect(verdict.ok ? undefined : verdict.error.code).toBe(-32001);
    }
  });

  it("refuses a message that names a task instead of creating one", async () => {
    const agent = freshAgent();
    const { task } = await begin(agent);
    const unknown = await agent.beginTask(beginInput(crypto.randomUUID(), { taskId: "ghost" }));
    expect(unknown.ok ? undefined : unknown.error.code).toBe(-32001);
    const existing = await agent.beginTask(beginInput(crypto.randomUUID(), { taskId: task.id }));
    expect(existing.ok ? undefined : existing.error).toMatchObject({
      code: -32004,
      data: [{ reason: "UNSUPPORTED_OPERATION", metadata: { taskState: "TASK_STATE_SUBMITTED" } }],
    });
    const page = await agent.listTasks({ pageSize: 10, includeArtifacts: false });
    expect(page.ok && page.value.totalSize).toBe(1);
  });

  it("keeps the caller's contextId, or makes one", async () => {
    const agent = freshAgent();
    expect((await begin(agent, undefined, { contextId: "ctx-7" })).task.contextId).toBe("ctx-7");
    expect((await begin(agent)).task.contextId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("the task store: rows and verdicts", () => {
  it("writes over a task unless its stored state is final, and never over a missing one", async () => {
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const verdicts = await runInDurableObject(stub, (_instance, state) => {
      const store = new AgentDB(state.storage, TERMINAL_STATE_NAMES).tasks;
      const doc = (s: string) => ({ id: "t1", state: s, statusAt: 1, json: JSON.stringify({ state: s }) });
      store.insert({ ...doc("TASK_STATE_SUBMITTED"), messageId: "m", contextId: "c" });
      return [
        store.write(doc("TASK_STATE_WORKING")),
        store.write(doc("TASK_STATE_CANCELED")),
        store.write(doc("TASK_STATE_COMPLETED")),
        store.write({ ...doc("TASK_STATE_WORKING"), id: "ghost" }),
      ];
    });
    expect(verdicts.map((v) => v.kind)).toEqual(["written", "written", "final", "missing"]);
    expect(verdicts[2]).toMatchObject({ row: { state: "TASK_STATE_CANCELED" } });
  });
});

describe("long lists on Durable Object SQLite (at most 100 bound variables a statement)", () => {
  it("retention deletes a batch of 200 finished tasks, and their messageId records later", async () => {
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const result = await runInDurableObject(stub, (_instance, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      for (let i = 0; i < 250; i++) {
        db.tasks.insert({ id: `t${i}`, state: "TASK_STATE_COMPLETED", statusAt: i, json: "{}", messageId: `m${i}`, contextId: "c" }, { id: "p", json: "{}" });
      }
      const deleted = db.tasks.deleteFinished(1_000, 200, 0);
      const forgotten = db.tasks.forgetMessages(Date.now() + 1_000, 200);
      return { deleted: deleted.tasks, left: db.tasks.page({ limit: 100 }), forgotten };
    });
    expect(result.deleted).toBe(200);
    expect(result.left).toMatchObject({ kind: "page", total: 50 });
    expect(result.forgotten).toBe(200);
  });

  it("a retention pass that forgets a full batch of messageIds, and direct replies besides, comes back at once", async () => {
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const swept = await runInDurableObject(stub, async (_instance, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      for (let i = 0; i < 200; i++)
        db.tasks.insert({ id: `t${i}`, state: "TASK_STATE_COMPLETED", statusAt: i, json: "{}", messageId: `m${i}`, contextId: "c" });
      for (let i = 0; i < 5; i++) db.directReplies.put(`r${i}`, "{}");
      // The tasks went in an earlier pass: this one finds only their messageIds, 200 of them, and the replies.
      db.tasks.deleteFinished(1_000, 200, 0);
      return sweepOnce(db, { finishedTaskDays: 0, messageIdDays: 0, conversationIdleDays: 30 }, Date.now() + 1_000, async () => {});
    });
    expect(swept).toEqual({ tasks: 0, messageIds: 205, conversations: 0, more: true });
  });

  it("a compaction folds hundreds of entries of a conversation at once", async () => {
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const left = await runInDurableObject(stub, (_instance, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      const conversations = db.conversations;
      // A turn's entries land only while its task exists (migrations/0013).
      for (let i = 0; i < 300; i++)
        db.tasks.insert({ id: `task-${i}`, state: "TASK_STATE_WORKING", statusAt: i, json: "{}", messageId: `m${i}`, contextId: "conv" });
      for (let i = 0; i < 300; i++) conversations.append("conv", `task-${i}`, `k${i}`, { role: "user", content: `turn ${i}` });
      for (let i = 0; i < 300; i++) conversations.commit(`task-${i}`);
      const foldable = conversations.foldable("conv", 0);
      conversations.claimCompaction("conv", Date.now() + 60_000);
      conversations.folded("conv", { role: "system", content: "summary" }, foldable.at(-1)!.id);
      return { folded: foldable.length, window: conversations.window("conv", "none", 400) };
    });
    expect(left.folded).toBeGreaterThan(100);
    expect(left.window.committed.length).toBe(300 - left.folded);
    expect(left.window.summary).toBeDefined();
  });
});

describe("ListTasks (A2A §3.1.4)", () => {
  it("walks 250 tasks page by page, each exactly once, newest status first", async () => {
    const agent = freshAgent();
    // Each turn delivered before the next: a caller has at most 32 in flight.
    for (let i = 0; i < 250; i++) {
      const begun = await begin(agent, `m-${i}`);
      await agent.turnDelivered(begun.task.id, begun.turn!.instanceId);
    }
    const seen: string[] = [];
    const stamps: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const verdict = await agent.listTasks({ pageSize: 40, pageToken, includeArtifacts: false });
      if (!verdict.ok) throw new Error(verdict.error.message);
      const page = verdict.value;
      expect(page.totalSize).toBe(250);
      expect(page.pageSize).toBe(40);
      expect(typeof page.nextPageToken).toBe("string");
      seen.push(...page.tasks.map((t) => t.id));
      stamps.push(...page.tasks.map((t) => t.status.timestamp ?? ""));
      pageToken = page.nextPageToken || undefined;
      pages++;
    } while (pageToken);
    expect(pages).toBe(7);
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect([...stamps].sort().reverse()).toEqual(stamps);
  });

  it("keeps its totals in a row per state, and a context whose tasks are gone keeps no count rows", async () => {
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const seen = await runInDurableObject(stub, (_instance, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      const sql = state.storage.sql;
      // One context per task, as a caller that never continues a conversation has them.
      for (let i = 0; i < 30; i++) {
        const id = `t${i}`;
        db.tasks.insert({ id, state: "TASK_STATE_SUBMITTED", statusAt: i, json: "{}", messageId: `m${i}`, contextId: `c${i}` });
        if (i % 3 === 0) continue;
        db.tasks.write({ id, state: "TASK_STATE_WORKING", statusAt: i, json: "{}" });
        if (i % 3 === 1) db.tasks.write({ id, state: "TASK_STATE_COMPLETED", statusAt: i, json: "{}" });
      }
      // The oldest finished tasks go (t1, t4, …, t13: five of the ten completed).
      const deleted = db.tasks.deleteFinished(14, 100, 0).tasks;
      const byState = (rows: { state: string; n: number }[]) => Object.fromEntries(rows.filter((r) => r.n !== 0).map((r) => [r.state, r.n]));
      const totals = byState(sql.exec<{ state: string; n: number }>("select state, n from task_totals").toArray());
      const counted = byState(sql.exec<{ state: string; n: number }>("select state, count(*) as n from tasks group by state").toArray());
      const orphanRows = sql.exec<{ n: number }>("select count(*) as n from task_counts where context_id not in (select context_id from tasks)").one().n;
      const negative = sql.exec<{ n: number }>("select count(*) as n from task_counts where n < 0").one().n;
      const page = (query: { state?: string; contextId?: string }) => {
        const found = db.tasks.page({ limit: 5, ...query });
        return found.kind === "page" ? found.total : -1;
      };
      const before = { all: page({}), working: page({ state: "TASK_STATE_WORKING" }), context: page({ contextId: "c2" }) };
      // The total over every context reads the per-state rows: the per-context ones can be as many as the contexts.
      sql.exec("delete from task_counts");
      const withoutCounts = { all: page({}), completed: page({ state: "TASK_STATE_COMPLETED" }) };
      return { deleted, totals, counted, orphanRows, negative, before, withoutCounts };
    });
    expect(seen.deleted).toBe(5);
    expect(seen.counted).toEqual({ TASK_STATE_SUBMITTED: 10, TASK_STATE_WORKING: 10, TASK_STATE_COMPLETED: 5 });
    expect(seen.totals).toEqual(seen.counted);
    expect(seen.orphanRows).toBe(0);
    expect(seen.negative).toBe(0);
    expect(seen.before).toEqual({ all: 25, working: 10, context: 1 });
    expect(seen.withoutCounts).toEqual({ all: 25, completed: 5 });
  });

  it("an object from before migration 0010 gets its totals from its tasks, and loses its count rows at 0", async () => {
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const seen = await runInDurableObject(stub, async (_instance, state) => {
      const sql = state.storage.sql;
      // Back to 0009: 0010's table and triggers gone, 0005's delete trigger back, 0011's and 0012's columns gone,
      // 0013's tables, columns and triggers gone, 0014's columns gone, and the records of 0010 and after forgotten.
      const triggers0013 = ["task_events_need_task", "conversation_entries_need_task", "tool_calls_need_task", "hitl_requests_need_task"];
      for (const trigger of ["task_totals_insert", "task_totals_update", "task_totals_delete", "task_counts_delete", ...triggers0013])
        sql.exec(`DROP TRIGGER ${trigger}`);
      for (const table of ["task_totals", "erasures", "erased_messages", "erasure_key"]) sql.exec(`DROP TABLE ${table}`);
      sql.exec("ALTER TABLE accepted_messages DROP COLUMN context_id");
      sql.exec("ALTER TABLE conversation_entries DROP COLUMN context_id");
      sql.exec(
        "CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN UPDATE task_counts SET n = n - 1 WHERE context_id = OLD.context_id AND state = OLD.state; END",
      );
      sql.exec("ALTER TABLE subtasks DROP COLUMN model_calls");
      sql.exec("ALTER TABLE push_configs DROP COLUMN progress");
      for (const table of ["turns", "usage_days"])
        for (const column of ["cached_input_tokens", "reasoning_tokens"]) sql.exec(`ALTER TABLE ${table} DROP COLUMN ${column}`);
      sql.exec("DELETE FROM __drizzle_migrations WHERE created_at >= (SELECT created_at FROM __drizzle_migrations ORDER BY created_at LIMIT 1 OFFSET 10)");
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      // Written as 0009's code wrote them: the store's statements are today's.
      for (let i = 0; i < 6; i++) {
        const id = `t${i}`;
        sql.exec(
          "INSERT INTO tasks (id, message_id, context_id, state, status_at, created_at, task_json) VALUES (?, ?, ?, 'TASK_STATE_SUBMITTED', ?, ?, '{}')",
          id,
          `m${i}`,
          `c${i}`,
          i,
          i,
        );
        sql.exec("UPDATE tasks SET state = 'TASK_STATE_WORKING' WHERE id = ?", id);
        if (i < 4) sql.exec("UPDATE tasks SET state = 'TASK_STATE_COMPLETED' WHERE id = ?", id);
      }
      const zeroRows = () => sql.exec<{ n: number }>("select count(*) as n from task_counts where n = 0").one().n;
      const before = zeroRows();
      await db.migrate();
      const totals = Object.fromEntries(
        sql
          .exec<{ state: string; n: number }>("select state, n from task_totals where n != 0")
          .toArray()
          .map((r) => [r.state, r.n]),
      );
      const page = db.tasks.page({ limit: 5, state: "TASK_STATE_COMPLETED" });
      return { before, after: zeroRows(), totals, completed: page.kind === "page" ? page.total : -1 };
    });
    // Six contexts left a row at 0 for submitted, and the four completed ones another for working.
    expect(seen.before).toBe(10);
    expect(seen.after).toBe(0);
    expect(seen.totals).toEqual({ TASK_STATE_WORKING: 2, TASK_STATE_COMPLETED: 4 });
    expect(seen.completed).toBe(4);
  });

  it("ends with an empty nextPageToken", async () => {
    const agent = freshAgent();
    for (let i = 0; i < 3; i++) await begin(agent);
    const verdict = await agent.listTasks({ pageSize: 50, includeArtifacts: false });
    expect(verdict.ok && verdict.value).toMatchObject({ nextPageToken: "", pageSize: 50, totalSize: 3 });
  });

  it("filters by contextId, status and statusTimestampAfter", async () => {
    const agent = freshAgent();
    const a = await begin(agent, undefined, { contextId: "a" });
    await begin(agent, undefined, { contextId: "b" });
    const cutoff = Date.now() + 1;
    await new Promise((r) => setTimeout(r, 5));
    const late = await begin(agent, undefined, { contextId: "b" });
    await agent.cancelTask(a.task.id);

    const byContext = await agent.listTasks({ contextId: "b", pageSize: 10, includeArtifacts: false });
    expect(byContext.ok && byContext.value.tasks.map((t) => t.contextId)).toEqual(["b", "b"]);
    const byState = await agent.listTasks({ state: "TASK_STATE_CANCELED", pageSize: 10, includeArtifacts: false });
    expect(byState.ok && byState.value.tasks.map((t) => t.id)).toEqual([a.task.id]);
    const after = await agent.listTasks({ statusAfter: cutoff, pageSize: 10, includeArtifacts: false });
    expect(after.ok && after.value.tasks.map((t) => t.id).sort()).toEqual([a.task.id, late.task.id].sort());
  });

  it("applies historyLength and leaves artifacts out unless asked", async () => {
    const agent = freshAgent();
    const { task } = await begin(agent);
    await complete(agent, task.id);
    const lean = await agent.listTasks({ pageSize: 10, includeArtifacts: false, historyLength: 0 });
    expect(lean.ok && lean.value.tasks[0]).not.toHaveProperty("artifacts");
    expect(lean.ok && lean.value.tasks[0]).not.toHaveProperty("history");
    const full = await agent.listTasks({ pageSize: 10, includeArtifacts: true });
    expect(full.ok && full.value.tasks[0]?.artifacts).toHaveLength(1);
    expect(full.ok && full.value.tasks[0]?.history).toHaveLength(2);
  });

  it("refuses a page token it did not issue", async () => {
    const bad = await freshAgent().listTasks({ pageSize: 10, pageToken: "garbage", includeArtifacts: false });
    expect(bad.ok ? undefined : bad.error.code).toBe(-32602);
  });

  it("refuses an out-of-range pageSize at the edge, before any object is asked", async () => {
    using _ = interceptOutbound();
    for (const pageSize of [0, 101, 2.5]) {
      const reply = await call("ListTasks", { pageSize });
      expect(reply.body.error.code).toBe(-32602);
      expect(reply.body.error.message).toContain("params.pageSize");
    }
  });
});
