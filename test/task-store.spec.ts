import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { AgentDB, type TaskStore } from "@dynamicagents/core/db";
import { settle } from "@dynamicagents/core/a2a";
import { describe, expect, it } from "vitest";
import { PUSH_URL } from "./support/constants.js";
import { userMessage } from "./support/rpc.js";

const pushConfig = { url: PUSH_URL, token: "t" };

/**
 * The task store of a fresh Durable Object, used from inside it (its SQLite,
 * migrated by the object's constructor), with the RPC-facing shape of every
 * method: a value or an A2A error.
 */
function freshAgent() {
  const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
  const inside = <T>(fn: (store: TaskStore) => T) => runInDurableObject(stub, (_instance, state) => fn(new AgentDB(state.storage).tasks));
  return {
    beginTask: (input: Parameters<TaskStore["begin"]>[0]) => inside((s) => settle(() => s.begin(input))),
    getTask: (id: string, historyLength?: number) => inside((s) => s.get(id, historyLength)),
    saveTask: (task: Parameters<TaskStore["save"]>[0]) => inside((s) => s.save(task)),
    cancelTask: (id: string) => inside((s) => settle(() => s.cancel(id))),
    listTasks: (query: Parameters<TaskStore["list"]>[0]) => inside((s) => settle(() => s.list(query))),
  };
}
type Agent = ReturnType<typeof freshAgent>;

async function begin(agent: Agent, messageId = crypto.randomUUID(), extra: Record<string, unknown> = {}) {
  const outcome = await agent.beginTask({ message: userMessage("hi", messageId, extra), pushConfig });
  if (!outcome.ok) throw new Error(outcome.error.message);
  return outcome.value;
}

describe("the task store in the caller's Durable Object", () => {
  it("records a submitted task holding the message", async () => {
    const agent = freshAgent();
    const { task, created } = await begin(agent, "m-1");
    expect(created).toBe(true);
    expect(task).toMatchObject({ status: { state: "TASK_STATE_SUBMITTED" }, history: [{ messageId: "m-1", taskId: task.id }] });
    expect(await agent.getTask(task.id)).toEqual(task);
  });

  it("is idempotent on messageId, also under concurrency", async () => {
    const agent = freshAgent();
    const results = await Promise.all(Array.from({ length: 10 }, () => begin(agent, "same")));
    const ids = new Set(results.map((r) => r.task.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const page = await agent.listTasks({ pageSize: 100, includeArtifacts: false });
    expect(page.ok && page.value.totalSize).toBe(1);
  });

  it("refuses any write once a task is terminal, and says so in the verdict", async () => {
    const agent = freshAgent();
    const { task } = await begin(agent);
    const working = await agent.saveTask({ ...task, status: { state: "TASK_STATE_WORKING" } });
    expect(working.saved).toBe(true);
    const canceled = await agent.cancelTask(task.id);
    expect(canceled.ok && canceled.value.status).toMatchObject({ state: "TASK_STATE_CANCELED" });

    const late = await agent.saveTask({ ...task, status: { state: "TASK_STATE_COMPLETED" } });
    expect(late).toMatchObject({ saved: false, reason: "terminal", task: { status: { state: "TASK_STATE_CANCELED" } } });
    expect((await agent.getTask(task.id))?.status).toMatchObject({ state: "TASK_STATE_CANCELED" });
  });

  it("refuses to cancel a terminal task with -32002 and an unknown one with -32001", async () => {
    const agent = freshAgent();
    const { task } = await begin(agent);
    await agent.saveTask({ ...task, status: { state: "TASK_STATE_COMPLETED" } });
    const again = await agent.cancelTask(task.id);
    expect(again.ok ? undefined : again.error.code).toBe(-32002);
    const missing = await agent.cancelTask("nope");
    expect(missing.ok ? undefined : missing.error.code).toBe(-32001);
  });

  it("reports saving an unknown task as not-found", async () => {
    expect(await freshAgent().saveTask({ id: "ghost", contextId: "c", status: { state: "TASK_STATE_WORKING" } })).toEqual({
      saved: false,
      reason: "not-found",
    });
  });

  it("refuses a message that names a task instead of creating one", async () => {
    const agent = freshAgent();
    const { task } = await begin(agent);
    const unknown = await agent.beginTask({ message: userMessage("x", crypto.randomUUID(), { taskId: "ghost" }), pushConfig });
    expect(unknown.ok ? undefined : unknown.error.code).toBe(-32001);
    const existing = await agent.beginTask({ message: userMessage("x", crypto.randomUUID(), { taskId: task.id }), pushConfig });
    expect(existing.ok ? undefined : existing.error.code).toBe(-32004);
    const page = await agent.listTasks({ pageSize: 10, includeArtifacts: false });
    expect(page.ok && page.value.totalSize).toBe(1);
  });

  it("keeps the caller's contextId, or makes one", async () => {
    const agent = freshAgent();
    expect((await begin(agent, undefined, { contextId: "ctx-7" })).task.contextId).toBe("ctx-7");
    expect((await begin(agent)).task.contextId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("ListTasks (A2A §3.1.4)", () => {
  it("walks 250 tasks page by page, each exactly once, newest status first", async () => {
    const agent = freshAgent();
    for (let i = 0; i < 250; i++) await begin(agent, `m-${i}`);
    const seen: string[] = [];
    const stamps: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const outcome = await agent.listTasks({ pageSize: 40, pageToken, includeArtifacts: false });
      if (!outcome.ok) throw new Error(outcome.error.message);
      const page = outcome.value;
      expect(page.totalSize).toBe(250);
      expect(page.pageSize).toBe(40);
      expect(typeof page.nextPageToken).toBe("string");
      seen.push(...page.tasks.map((t) => t.id));
      stamps.push(...page.tasks.map((t) => (t.status as { timestamp: string }).timestamp));
      pageToken = page.nextPageToken || undefined;
      pages++;
    } while (pageToken);
    expect(pages).toBe(7);
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect([...stamps].sort().reverse()).toEqual(stamps);
  });

  it("defaults to 50 per page and ends with an empty nextPageToken", async () => {
    const agent = freshAgent();
    for (let i = 0; i < 3; i++) await begin(agent);
    const outcome = await agent.listTasks({ pageSize: 50, includeArtifacts: false });
    expect(outcome.ok && outcome.value).toMatchObject({ nextPageToken: "", pageSize: 50, totalSize: 3 });
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
    const byState = await agent.listTasks({ state: 5, pageSize: 10, includeArtifacts: false });
    expect(byState.ok && byState.value.tasks.map((t) => t.id)).toEqual([a.task.id]);
    const after = await agent.listTasks({ statusAfter: cutoff, pageSize: 10, includeArtifacts: false });
    expect(after.ok && after.value.tasks.map((t) => t.id).sort()).toEqual([a.task.id, late.task.id].sort());
  });

  it("applies historyLength and leaves artifacts out unless asked", async () => {
    const agent = freshAgent();
    const { task } = await begin(agent);
    await agent.saveTask({
      ...task,
      status: { state: "TASK_STATE_COMPLETED" },
      artifacts: [{ artifactId: "a1", parts: [{ text: "result" }] }],
    });
    const lean = await agent.listTasks({ pageSize: 10, includeArtifacts: false, historyLength: 0 });
    expect(lean.ok && lean.value.tasks[0]).not.toHaveProperty("artifacts");
    expect(lean.ok && lean.value.tasks[0]).not.toHaveProperty("history");
    const full = await agent.listTasks({ pageSize: 10, includeArtifacts: true });
    expect(full.ok && full.value.tasks[0]?.artifacts).toHaveLength(1);
    expect(full.ok && full.value.tasks[0]?.history).toHaveLength(1);
  });

  it("refuses a page token it did not issue and an out-of-range pageSize", async () => {
    const agent = freshAgent();
    const bad = await agent.listTasks({ pageSize: 10, pageToken: "garbage", includeArtifacts: false });
    expect(bad.ok ? undefined : bad.error.code).toBe(-32602);
    const big = await agent.listTasks({ pageSize: 101, includeArtifacts: false });
    expect(big.ok ? undefined : big.error.code).toBe(-32602);
  });
});
