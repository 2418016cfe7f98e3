import { env } from "cloudflare:workers";
import { introspectWorkflow, runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES, newTrace, turnTrace } from "@dynamicagents/core/a2a";
import { resolveConfig } from "@dynamicagents/core/agent";
import { AgentDB, type ConversationStore } from "@dynamicagents/core/db";
import { createAgentRuntime, definePlugin, type AgentPlugin } from "@dynamicagents/core/plugin";
import { callsOf, chatCompletionBody, mockModel, scriptedChoices } from "@dynamicagents/core/testing";
import { tool, type ModelMessage, type ToolSet } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { compactConversation } from "../src/round/conversation.js";
import { runRound, type RoundInput } from "../src/round/loop.js";
import { assistantPolicy } from "../reference/policy.js";
import { chatCompletion, chatToolCall, eventually, interceptOutbound, type ModelCall, type Outbound } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";

const config = resolveConfig({ turn: { maxSteps: 3 } });
const toolsPlugin = (tools: ToolSet) => definePlugin({ key: "tools", toolFamilies: { f: () => ({ tools }) } });
const freshObject = () => env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));

/**
 * One round of the turn loop, run inside a real caller's object (its SQLite
 * holds the conversation, the tool journal and the round's decision), with a
 * scripted model.
 */
async function turnOf(over: Partial<RoundInput> & { plugins?: AgentPlugin[]; object?: DurableObjectStub; conversationId?: string } = {}) {
  const { plugins = [], object = freshObject(), conversationId = "c", ...input } = over;
  const taskId = input.taskId ?? crypto.randomUUID();
  return runInDurableObject(object, (_instance, state) => {
    const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
    if (!db.tasks.get(taskId))
      db.tasks.insert({ id: taskId, messageId: taskId, contextId: conversationId, state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
    return runRound({
      config,
      policy: assistantPolicy,
      runtime: createAgentRuntime({ plugins, env: {}, config }),
      conversation: { store: db.conversations, id: conversationId },
      journal: db.toolCalls,
      hitl: db.hitl,
      rounds: db.subtasks,
      delegates: false,
      env: {},
      soul: "You are a test agent.",
      round: 1,
      text: "hello",
      parts: [{ text: input.text ?? "hello" }],
      addArtifact: () => {
        throw new Error("these specs add no artifacts");
      },
      origin: "https://o.test",
      trace: turnTrace(newTrace()),
      ...input,
      taskId,
      contextId: conversationId,
    });
  });
}

/** What the object holds of a conversation and a turn's tool calls. */
const inObject = <T>(object: DurableObjectStub, read: (db: AgentDB) => T) =>
  runInDurableObject(object, (_i, state) => read(new AgentDB(state.storage, TERMINAL_STATE_NAMES)));

const gatePlugin = (answer: boolean | "throw") =>
  definePlugin({
    key: `gate-${crypto.randomUUID()}`,
    shouldHandleTurn: () => {
      if (answer === "throw") throw new Error("gate bug");
      return answer;
    },
  });

/** The text a model call was given, message by message (tool parts as JSON). */
const transcript = (c: ModelCall) =>
  c.messages.filter((m) => m.role !== "system").map((m) => [m.role, typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? m.tool_calls)]);

describe("conversations through the edge: one per context", () => {
  let workflows: Awaited<ReturnType<typeof introspectWorkflow>>;
  let outbound: Outbound;
  beforeEach(async () => {
    workflows = await introspectWorkflow(env.TURN_WORKFLOW);
    await workflows.modifyAll(async (m) => m.disableRetryDelays());
    outbound = interceptOutbound();
  });
  afterEach(async () => {
    outbound.restore();
    await workflows.dispose();
  });

  async function turn(caller: object, text: string, contextId?: string) {
    const params = sendParams(text);
    if (contextId) Object.assign(params.message, { contextId });
    const task = (await call("SendMessage", params, { mint: caller })).body.result.task;
    await eventually(
      () => outbound.pushes.find((p) => p.body.task?.id === task.id),
      (push) => push !== undefined,
      `the answer to ${text}`,
    );
    return task;
  }

  it("continues a context across turns, keeps two contexts apart, and adopts an id it never issued", async () => {
    const caller = { identity: { key: `caller-${crypto.randomUUID()}` } };
    const first = await turn(caller, "my name is Ada");
    expect(first.contextId).toMatch(/^[0-9a-f-]{36}$/);
    await turn(caller, "I like tea", first.contextId);
    await turn(caller, "what do you know about me?", first.contextId);
    expect(transcript(outbound.modelCalls.at(-1)!)).toEqual([
      ["user", "my name is Ada"],
      ["assistant", "echo: my name is Ada"],
      ["user", "I like tea"],
      ["assistant", "echo: I like tea"],
      ["user", "what do you know about me?"],
    ]);
    // No contextId: a new conversation, which sees none of the first.
    const other = await turn(caller, "who am I?");
    expect(other.contextId).not.toBe(first.contextId);
    expect(transcript(outbound.modelCalls.at(-1)!)).toEqual([["user", "who am I?"]]);
    // A contextId the server never issued starts a conversation under that id.
    const adopted = await turn(caller, "start here", "ctx-of-my-own");
    expect(adopted.contextId).toBe("ctx-of-my-own");
    await turn(caller, "and go on", "ctx-of-my-own");
    expect(transcript(outbound.modelCalls.at(-1)!)).toEqual([
      ["user", "start here"],
      ["assistant", "echo: start here"],
      ["user", "and go on"],
    ]);
    // Another caller with the same contextId has a conversation of its own.
    await turn({ identity: { key: `caller-${crypto.randomUUID()}` } }, "hello?", "ctx-of-my-own");
    expect(transcript(outbound.modelCalls.at(-1)!)).toEqual([["user", "hello?"]]);
  });

  it("16 turns in flight in one conversation each see only finished turns and their own: every answer carries its own input", async () => {
    const caller = { identity: { key: `caller-${crypto.randomUUID()}` } };
    const contextId = `ctx-${crypto.randomUUID()}`;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    outbound.model = async (c) => {
      await gate;
      const last = [...c.messages].reverse().find((m) => m.role === "user");
      return chatCompletion(`echo: ${String(last?.content)}`, c.model);
    };
    const texts = Array.from({ length: 16 }, (_, i) => `question ${i}`);
    const tasks = await Promise.all(
      texts.map(async (text) => {
        const params = sendParams(text);
        Object.assign(params.message, { contextId });
        return (await call("SendMessage", params, { mint: caller })).body.result.task;
      }),
    );
    await eventually(
      () => outbound.modelCalls.length,
      (n) => n === 16,
      "16 model calls in flight",
    );
    release();
    await eventually(
      () => outbound.pushes.filter((p) => p.body.task).length,
      (n) => n === 16,
      "16 answers",
    );
    for (const [i, task] of tasks.entries()) {
      const pushed = outbound.pushes.find((p) => p.body.task?.id === task.id)!.body.task;
      expect(pushed.artifacts[0].parts[0].text).toBe(`echo: ${texts[i]}`);
    }
    // Every request ended with its own turn's message, and carried no other turn in flight.
    for (const c of outbound.modelCalls) expect(transcript(c)).toHaveLength(1);
  });

  it("20 callers with turns in flight at once never see each other's messages", async () => {
    const callers = Array.from({ length: 20 }, () => ({ identity: { key: `caller-${crypto.randomUUID()}` } }));
    const tasks = await Promise.all(
      callers.map(async (caller, i) => ({ i, task: (await call("SendMessage", sendParams(`mine is ${i}`), { mint: caller })).body.result.task })),
    );
    await eventually(
      () => outbound.pushes.filter((p) => p.body.task).length,
      (n) => n === 20,
      "20 answers",
    );
    for (const { i, task } of tasks)
      expect(outbound.pushes.find((p) => p.body.task?.id === task.id)!.body.task.artifacts[0].parts[0].text).toBe(`echo: mine is ${i}`);
  });

  it("a later turn sees an earlier turn's tool call and its result", async () => {
    const caller = { identity: { key: `caller-${crypto.randomUUID()}` } };
    outbound.model = (c) =>
      c.tools.includes("current_time") && !c.messages.some((m) => m.role === "tool") && transcript(c).length === 1
        ? chatToolCall("current_time", { timeZone: "Asia/Tokyo" }, c.model)
        : chatCompletion("noted", c.model);
    const first = await turn(caller, "what time is it in Tokyo?");
    await turn(caller, "and what did you look up?", first.contextId);
    const later = JSON.stringify(outbound.modelCalls.at(-1)!.messages);
    expect(later).toContain("current_time");
    expect(later).toContain("Asia/Tokyo");
    expect(outbound.modelCalls.at(-1)!.messages.some((m) => m.role === "tool")).toBe(true);
  });

  it("a task's history is its own messages, and historyLength counts them", async () => {
    const caller = { identity: { key: `caller-${crypto.randomUUID()}` } };
    const first = await turn(caller, "one");
    const second = await turn(caller, "two", first.contextId);
    const got = await call("GetTask", { id: second.id }, { mint: caller });
    expect(got.body.result.history.map((m: { parts: Array<{ text: string }> }) => m.parts[0]!.text)).toEqual(["two", "echo: two"]);
    const last = await call("GetTask", { id: second.id, historyLength: 1 }, { mint: caller });
    expect(last.body.result.history.map((m: { parts: Array<{ text: string }> }) => m.parts[0]!.text)).toEqual(["echo: two"]);
  });
});

describe("the per-caller conversation, an author's opt-in", () => {
  it("is one conversation across the caller's contexts: a turn in one sees a finished turn of another", async () => {
    // `history.conversation: "caller"` names every task's conversation "caller", whatever its context.
    const object = freshObject();
    await turnOf({ object, taskId: "in-a", conversationId: "caller", text: "said in context a", models: scriptedChoices(mockModel(["ok"])) });
    await inObject(object, (db) => db.conversations.commit("in-a"));
    const model = mockModel(["ok"]);
    await turnOf({ object, taskId: "in-b", conversationId: "caller", text: "asked in context b", models: scriptedChoices(model) });
    const prompt = JSON.stringify(callsOf(model)[0]!.prompt);
    expect(prompt).toContain("said in context a");
    expect(prompt).toContain("asked in context b");
    // Per context (the default), the same two turns are strangers.
    const apart = mockModel(["ok"]);
    await turnOf({ object, taskId: "in-c", conversationId: "context-c", text: "asked in context c", models: scriptedChoices(apart) });
    expect(JSON.stringify(callsOf(apart)[0]!.prompt)).not.toContain("said in context a");
  });
});

describe("the tool loop", () => {
  const counter = () => {
    let calls = 0;
    return { calls: () => calls, tools: { count: tool({ inputSchema: z.object({}), execute: async () => ++calls }) } };
  };

  it("declines with no model call when a plugin's gate says so, and leaves no trace in the conversation", async () => {
    const model = mockModel(["should not be asked"]);
    const object = freshObject();
    expect(await turnOf({ object, plugins: [gatePlugin(false)], models: scriptedChoices(model) })).toEqual({
      kind: "answer",
      state: "TASK_STATE_COMPLETED",
      text: "",
      fresh: true,
    });
    expect(callsOf(model)).toHaveLength(0);
    expect(await inObject(object, (db) => db.conversations.window("c", "", 10).committed)).toHaveLength(0);
  });

  it("ANDs the plugins' gates, and a throwing gate counts as yes", async () => {
    const runtime = (...answers: Array<boolean | "throw">) => createAgentRuntime({ plugins: answers.map(gatePlugin), env: {}, config });
    expect(await runtime(true, "throw").shouldHandleTurn({ text: "x", taskId: "t" })).toBe(true);
    expect(await runtime(true, false).shouldHandleTurn({ text: "x", taskId: "t" })).toBe(false);
    const model = mockModel(["answered"]);
    expect(await turnOf({ plugins: [gatePlugin("throw")], models: scriptedChoices(model) })).toMatchObject({ kind: "answer", text: "answered" });
    expect(callsOf(model)).toHaveLength(1);
  });

  it("runs plugin tools and answers with their result", async () => {
    const c = counter();
    const model = mockModel([{ toolCalls: [{ toolName: "count", input: {} }] }, "the count is 1"]);
    expect(await turnOf({ plugins: [toolsPlugin(c.tools)], models: scriptedChoices(model) })).toMatchObject({ kind: "answer", text: "the count is 1" });
    expect(callsOf(model)).toHaveLength(2);
    expect(c.calls()).toBe(1);
    expect(JSON.stringify(callsOf(model)[1]!.prompt)).toContain('"tool-result"');
  });

  it("stops at its step bound when the model never stops calling tools, in the agent's words", async () => {
    const c = counter();
    const model = mockModel([{ toolCalls: [{ toolName: "count", input: {} }] }]);
    expect(await turnOf({ plugins: [toolsPlugin(c.tools)], models: scriptedChoices(model) })).toMatchObject({
      kind: "answer",
      text: assistantPolicy.messages.emptyAnswer,
    });
    expect(callsOf(model)).toHaveLength(3);
  });

  it("stops once the turn's token budget is spent", async () => {
    const c = counter();
    const model = mockModel([{ toolCalls: [{ toolName: "count", input: {} }], tokens: 400 }]);
    await turnOf({
      plugins: [toolsPlugin(c.tools)],
      models: scriptedChoices(model),
      config: resolveConfig({ turn: { maxSteps: 10, maxTokensPerTurn: 1000 } }),
    });
    expect(callsOf(model)).toHaveLength(3);
  });

  it("shows the model a redacted tool result, and journals the redacted one", async () => {
    const leaky = definePlugin({
      key: "leaky",
      toolFamilies: { leak: () => ({ tools: { leak: tool({ inputSchema: z.object({}), execute: async () => "password=hunter2" }) } }) },
      onToolResult: ({ output }) => String(output).replace(/hunter2/, "[redacted]"),
    });
    const object = freshObject();
    const model = mockModel([{ toolCalls: [{ toolName: "leak", input: {} }] }, "done"]);
    await turnOf({ object, taskId: "t-leak", plugins: [leaky], models: scriptedChoices(model) });
    const seen = JSON.stringify(callsOf(model)[1]!.prompt);
    expect(seen).toContain("[redacted]");
    expect(seen).not.toContain("hunter2");
    const journal = await inObject(object, (db) => db.toolCalls.ofTask("t-leak"));
    expect(journal).toEqual([expect.objectContaining({ toolName: "leak", status: "finished", outputJson: '"password=[redacted]"' })]);
  });

  it("falls back to the second model and fails in the agent's words when both fail", async () => {
    const fallback = mockModel(["from fallback"]);
    expect(await turnOf({ models: scriptedChoices(mockModel([new Error("broken")]), fallback) })).toMatchObject({ kind: "answer", text: "from fallback" });
    const failed = await turnOf({ models: scriptedChoices(mockModel([new Error("a")]), mockModel([new Error("b")])) });
    expect(failed).toEqual({ kind: "answer", state: "TASK_STATE_FAILED", text: assistantPolicy.messages.failure, fresh: true });
  });

  it("writes the exchange once even when the turn step runs twice", async () => {
    const object = freshObject();
    const again = mockModel(["second"]);
    const first = await turnOf({ object, taskId: "t-rerun", models: scriptedChoices(mockModel(["first"])) });
    expect(first).toMatchObject({ kind: "answer", fresh: true });
    // The step runs again (its reply was lost): the recorded decision answers, the model is not asked, and it says it decided nothing new.
    expect(await turnOf({ object, taskId: "t-rerun", models: scriptedChoices(again) })).toEqual({ ...first, fresh: false });
    expect(callsOf(again)).toHaveLength(0);
    const own = await inObject(object, (db) => db.conversations.own("t-rerun").map((e) => (JSON.parse(e.messageJson) as ModelMessage).role));
    expect(own).toEqual(["user", "assistant"]);
  });
});

describe("the tool-call journal", () => {
  /** A side-effecting tool: every run is counted, so a second run shows. */
  const effects = () => {
    const runs: string[] = [];
    return {
      runs,
      plugin: toolsPlugin({ send_mail: tool({ inputSchema: z.object({ to: z.string() }), execute: async ({ to }) => (runs.push(to), { sent: to }) }) }),
    };
  };

  it("a retried step calls a side-effecting tool once: the retry, and the fallback model, get the recorded result", async () => {
    const object = freshObject();
    const mail = effects();
    // The primary calls the tool, then dies before answering: the round fails over to the fallback, which calls it the same way.
    const primary = mockModel([{ toolCalls: [{ toolName: "send_mail", input: { to: "ada@example.com" } }] }, new Error("primary died")]);
    const fallback = mockModel([{ toolCalls: [{ toolName: "send_mail", input: { to: "ada@example.com" } }] }, "mail sent"]);
    expect(await turnOf({ object, taskId: "t-mail", plugins: [mail.plugin], models: scriptedChoices(primary, fallback) })).toMatchObject({ text: "mail sent" });
    expect(mail.runs).toEqual(["ada@example.com"]);
    expect(JSON.stringify(callsOf(fallback)[1]!.prompt)).toContain("ada@example.com");
  });

  it("reports a call that started and never finished as interrupted, never running it again", async () => {
    const object = freshObject();
    const mail = effects();
    // What a crash mid-call leaves: the call recorded as started, never finished.
    await inObject(object, (db) => {
      db.tasks.insert({ id: "t-cut", messageId: "t-cut", contextId: "c", state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
      // Round 1, after the turn's first own message (the user's), the first such call.
      db.toolCalls.start("t-cut", 'r1.1:send_mail:{"to":"bob@example.com"}#0', "send_mail");
    });
    const model = mockModel([{ toolCalls: [{ toolName: "send_mail", input: { to: "bob@example.com" } }] }, "checked"]);
    await turnOf({ object, taskId: "t-cut", plugins: [mail.plugin], models: scriptedChoices(model) });
    expect(mail.runs).toEqual([]);
    const told = JSON.stringify(callsOf(model)[1]!.prompt);
    expect(told).toContain("interrupted");
    expect(told).toContain(JSON.stringify(assistantPolicy.messages.toolInterrupted).slice(1, -1));
  });
});

/** A turn's entries land only while its task exists (migrations/0012): the specs that write entries directly make the task first. */
function taskFor(db: AgentDB, taskId: string, contextId: string): string {
  if (!db.tasks.get(taskId)) db.tasks.insert({ id: taskId, messageId: taskId, contextId, state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
  return taskId;
}

describe("compaction", () => {
  const words = (n: number) => `${"lorem ipsum ".repeat(n)}`;

  async function seed(object: DurableObjectStub, conversationId: string, turns: number) {
    await inObject(object, (db) => {
      for (let i = 0; i < turns; i++) {
        const taskId = taskFor(db, `${conversationId}-t${i}`, conversationId);
        db.conversations.append(conversationId, taskId, `${taskId}:user`, { role: "user", content: `question ${i} ${words(40)}` });
        db.conversations.append(conversationId, taskId, `${taskId}:a`, { role: "assistant", content: `answer ${i} ${words(40)}` });
        db.conversations.commit(taskId);
      }
    });
  }

  it("folds the older turns into a summary, announces exactly the folded messages (even when a listener throws), and keeps the newest whole", async () => {
    const object = freshObject();
    await seed(object, "conv", 10);
    const displaced: ModelMessage[][] = [];
    const history = resolveConfig({ history: { compactAfterTokens: 600, keepRecentTokens: 300 } }).history;
    const folded = await inObject(object, (db) =>
      compactConversation({
        store: db.conversations,
        conversationId: "conv",
        history,
        instructions: "summarize",
        summarize: async () => "SUMMARY of the early conversation",
        onDisplaced: async (messages) => void displaced.push(messages),
      }),
    );
    expect(folded).toBeGreaterThan(0);
    const window = await inObject(object, (db) => db.conversations.window("conv", "", 100));
    expect(JSON.parse(window.summary!.messageJson)).toEqual({ text: "SUMMARY of the early conversation" });
    const kept = window.committed.map((e) =>
      String((JSON.parse(e.messageJson) as { content: string }).content)
        .split(" ")
        .slice(0, 2)
        .join(" "),
    );
    const gone = displaced[0]!.map((m) => String(m.content).split(" ").slice(0, 2).join(" "));
    // Folded and kept are disjoint and together the whole conversation, in order, whole turns each.
    expect([...gone, ...kept]).toEqual(Array.from({ length: 10 }, (_, i) => [`question ${i}`, `answer ${i}`]).flat());
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length % 2).toBe(0);
    // The folded entries are gone from storage: a conversation's cost stays bounded.
    expect(await inObject(object, (db) => db.conversations.window("conv", "", 10_000).committed.length)).toBe(kept.length);
  });

  it("bills its summary to the caller: today's total counts it (no task's: it runs after the turn)", async () => {
    using outbound = interceptOutbound();
    outbound.model = (c) => Response.json(chatCompletionBody({ content: "the summary", usage: { inputTokens: 40, outputTokens: 8 } }, c.model));
    const object = freshObject();
    type Summarizer = { summarize(instructions: string, transcript: string): Promise<string> };
    const summary = await runInDurableObject(object, (instance) => (instance as unknown as Summarizer).summarize("summarize", "a transcript"));
    expect(summary).toBe("the summary");
    expect(await inObject(object, (db) => db.usage.ofDay())).toEqual({ inputTokens: 40, outputTokens: 8, modelCalls: 1 });
  });

  it("runs at most once at a time per conversation", async () => {
    const object = freshObject();
    await seed(object, "busy", 10);
    const history = resolveConfig({ history: { compactAfterTokens: 600, keepRecentTokens: 300 } }).history;
    let summaries = 0;
    const results = await inObject(object, (db) =>
      Promise.all(
        Array.from({ length: 5 }, () =>
          compactConversation({
            store: db.conversations,
            conversationId: "busy",
            history,
            instructions: "summarize",
            summarize: async () => {
              summaries++;
              await new Promise((resolve) => setTimeout(resolve, 20));
              return "one summary";
            },
            onDisplaced: async () => {},
          }),
        ),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(summaries).toBe(1);
  });

  it("the window reads a bounded tail, however long the conversation is", async () => {
    const object = freshObject();
    await inObject(object, (db) => {
      for (let i = 0; i < 500; i++) {
        db.conversations.append("long", taskFor(db, `t${i}`, "long"), `t${i}:u`, { role: "user", content: `q${i}` });
        db.conversations.commit(`t${i}`);
      }
    });
    const window = await inObject(object, (db) => db.conversations.window("long", "", 50));
    expect(window.committed).toHaveLength(50);
    expect((JSON.parse(window.committed.at(-1)!.messageJson) as { content: string }).content).toBe("q499");
  });

  it("keeps a turn's messages out of every other turn until it ends, and drops them when it is canceled", async () => {
    const object = freshObject();
    await inObject(object, (db) => {
      const store: ConversationStore = db.conversations;
      for (const taskId of ["done", "running", "canceled"]) taskFor(db, taskId, "k");
      store.append("k", "done", "done:u", userMessageModel("finished turn"));
      store.commit("done");
      store.append("k", "running", "running:u", userMessageModel("in flight"));
      store.append("k", "canceled", "canceled:u", userMessageModel("canceled turn"));
      store.discard("canceled");
    });
    const seenByAnother = await inObject(object, (db) => db.conversations.window("k", "another", 10));
    expect(seenByAnother.committed.map((e) => e.entryKey)).toEqual(["done:u"]);
    expect(seenByAnother.own).toEqual([]);
    const seenByItself = await inObject(object, (db) => db.conversations.window("k", "running", 10));
    expect(seenByItself.own.map((e) => e.entryKey)).toEqual(["running:u"]);
    expect(await inObject(object, (db) => db.conversations.own("canceled"))).toEqual([]);
  });
});

const userMessageModel = (text: string): ModelMessage => ({ role: "user", content: text });
