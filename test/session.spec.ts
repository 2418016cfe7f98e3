import { env } from "cloudflare:workers";
import { introspectWorkflow, runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { bindSession, resolveConfig, type SessionMessage } from "@dynamicagents/core/agent";
import { AgentDB } from "@dynamicagents/core/db";
import { createAgentRuntime, definePlugin, type AgentPlugin } from "@dynamicagents/core/plugin";
import { FakeSession, mockModel, scriptedChoices } from "@dynamicagents/core/testing";
import type { Sessions } from "agents/sessions";
import { tool, type ToolSet } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runRound, type RoundInput } from "../src/host/turn-loop.js";
import { assistantPolicy } from "../reference/policy.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";

const config = resolveConfig({ turn: { maxSteps: 3 } });
const toolsPlugin = (tools: ToolSet) => definePlugin({ key: "tools", toolFamilies: { f: () => ({ tools }) } });

/**
 * One round of the turn loop, run inside a real caller's object (its SQLite
 * records the round's decision), with a scripted model.
 */
async function turnOf(over: Partial<RoundInput> & { plugins?: AgentPlugin[]; object?: DurableObjectStub } = {}) {
  const { plugins = [], object = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID())), ...input } = over;
  const taskId = input.taskId ?? crypto.randomUUID();
  return runInDurableObject(object, (_instance, state) => {
    const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
    if (!db.tasks.get(taskId)) db.tasks.insert({ id: taskId, messageId: taskId, contextId: "c", state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
    return runRound({
      session: new FakeSession(),
      config,
      policy: assistantPolicy,
      runtime: createAgentRuntime({ plugins, env: {}, config }),
      rounds: db.subtasks,
      delegates: false,
      env: {},
      soul: "You are a test agent.",
      round: 1,
      text: "hello",
      origin: "https://o.test",
      ...input,
      taskId,
    });
  });
}
const gatePlugin = (answer: boolean | "throw") =>
  definePlugin({
    key: `gate-${crypto.randomUUID()}`,
    shouldHandleTurn: () => {
      if (answer === "throw") throw new Error("gate bug");
      return answer;
    },
  });

describe("one continuous session per caller", () => {
  it("continues one conversation across three turns, through the edge and the Workflow", async () => {
    await using workflows = await introspectWorkflow(env.TURN_WORKFLOW);
    await workflows.modifyAll(async (m) => m.disableRetryDelays());
    using outbound = interceptOutbound();
    const caller = { identity: { key: `caller-${crypto.randomUUID()}` } };
    for (const text of ["my name is Ada", "I like tea", "what do you know about me?"]) {
      const before = outbound.pushes.length;
      await call("SendMessage", sendParams(text), { mint: caller });
      for (let i = 0; i < 400 && outbound.pushes.length === before; i++) await new Promise((r) => setTimeout(r, 25));
    }
    expect(outbound.pushes.map((p) => p.body.task.status.state)).toEqual(["TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"]);
    const third = outbound.modelCalls.at(-1)!.messages.filter((m) => m.role !== "system");
    expect(third.map((m) => [m.role, typeof m.content === "string" ? m.content : JSON.stringify(m.content)])).toEqual([
      ["user", "my name is Ada"],
      ["assistant", "echo: my name is Ada"],
      ["user", "I like tea"],
      ["assistant", "echo: I like tea"],
      ["user", "what do you know about me?"],
    ]);
    // Another caller starts from nothing.
    await call("SendMessage", sendParams("who am I?"), { mint: { identity: { key: `caller-${crypto.randomUUID()}` } } });
    for (let i = 0; i < 400 && outbound.pushes.length === 3; i++) await new Promise((r) => setTimeout(r, 25));
    expect(outbound.modelCalls.at(-1)!.messages.filter((m) => m.role !== "system")).toHaveLength(1);
  });
});

describe("compaction", () => {
  it("folds old history into a summary, announcing exactly the folded messages, even when a listener throws", async () => {
    const recorded: SessionMessage[][] = [];
    const runtime = createAgentRuntime({
      plugins: [
        definePlugin({
          key: "broken-archive",
          onMessagesDisplaced: () => {
            throw new Error("archive is down");
          },
        }),
        definePlugin({ key: "recorder", onMessagesDisplaced: (messages) => void recorded.push(messages as SessionMessage[]) }),
      ],
      env: {},
      config: resolveConfig(),
    });
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const history = await runInDurableObject(stub, async (instance) => {
      const sessions = (instance as unknown as { sessions: Sessions }).sessions;
      const session = bindSession(sessions.session("compaction-spec"), {
        compactAfterTokens: 600,
        keepRecentTokens: 150,
        summarize: async () => "SUMMARY of the early conversation",
        onMessagesDisplaced: (messages) => runtime.onMessagesDisplaced(messages),
      });
      for (let i = 0; i < 12; i++) {
        await session.append({ id: `m${i}`, role: i % 2 ? "assistant" : "user", parts: [{ type: "text", text: `message ${i} ${"lorem ipsum ".repeat(20)}` }] });
      }
      return session.history();
    });
    expect(recorded.length).toBeGreaterThan(0);
    const folded = recorded.flat().map((m) => m.id);
    const summaries = history.filter((m) => m.id.startsWith("compaction_"));
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.parts[0]!.text).toBe("SUMMARY of the early conversation");
    // Exactly the folded ones are gone from the history, in order, and nothing else.
    const visible = history.filter((m) => !m.id.startsWith("compaction_")).map((m) => m.id);
    const all = Array.from({ length: 12 }, (_, i) => `m${i}`);
    expect([...visible, ...folded].sort()).toEqual([...all].sort());
    expect(new Set(folded).size).toBe(folded.length);
    expect(folded).toEqual(all.filter((id) => folded.includes(id)));
  });
});

describe("the turn gates", () => {
  it("a declining gate completes the turn with no model call", async () => {
    const model = mockModel(["should not be asked"]);
    const result = await turnOf({ plugins: [gatePlugin(false)], models: scriptedChoices(model) });
    expect(result).toEqual({ kind: "answer", state: "TASK_STATE_COMPLETED", text: "" });
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it("ANDs the plugins' gates, and a throwing gate counts as yes", async () => {
    const runtime = (...answers: Array<boolean | "throw">) => createAgentRuntime({ plugins: answers.map(gatePlugin), env: {}, config });
    expect(await runtime(true, "throw").shouldHandleTurn({ text: "x", taskId: "t" })).toBe(true);
    expect(await runtime(true, false).shouldHandleTurn({ text: "x", taskId: "t" })).toBe(false);
    const model = mockModel(["answered"]);
    const result = await turnOf({ plugins: [gatePlugin("throw")], models: scriptedChoices(model) });
    expect(result).toMatchObject({ kind: "answer", text: "answered" });
    expect(model.doGenerateCalls).toHaveLength(1);
  });
});

describe("the tool loop", () => {
  const counter = () => {
    let calls = 0;
    return { calls: () => calls, tools: { count: tool({ inputSchema: z.object({}), execute: async () => ++calls }) } };
  };

  it("runs plugin tools and answers with their result", async () => {
    const c = counter();
    const model = mockModel([{ toolCalls: [{ toolName: "count", input: {} }] }, "the count is 1"]);
    const result = await turnOf({ plugins: [toolsPlugin(c.tools)], models: scriptedChoices(model) });
    expect(result).toMatchObject({ kind: "answer", text: "the count is 1" });
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(c.calls()).toBe(1);
    expect(JSON.stringify(model.doGenerateCalls[1]!.prompt)).toContain('"tool-result"');
  });

  it("stops at its step bound when the model never stops calling tools", async () => {
    const c = counter();
    const model = mockModel([{ toolCalls: [{ toolName: "count", input: {} }] }]);
    const result = await turnOf({ plugins: [toolsPlugin(c.tools)], models: scriptedChoices(model) });
    expect(model.doGenerateCalls).toHaveLength(3);
    // It wrote no text: the agent's own words for that.
    expect(result).toMatchObject({ kind: "answer", text: assistantPolicy.messages.emptyAnswer });
  });

  it("stops once the turn's token budget is spent", async () => {
    const c = counter();
    const model = mockModel([{ toolCalls: [{ toolName: "count", input: {} }], tokens: 400 }]);
    await turnOf({
      plugins: [toolsPlugin(c.tools)],
      models: scriptedChoices(model),
      config: resolveConfig({ turn: { maxSteps: 10, maxTokensPerTurn: 1000 } }),
    });
    expect(model.doGenerateCalls).toHaveLength(3);
  });

  it("shows the model a redacted tool result", async () => {
    const leaky = definePlugin({
      key: "leaky",
      toolFamilies: { leak: () => ({ tools: { leak: tool({ inputSchema: z.object({}), execute: async () => "password=hunter2" }) } }) },
      onToolResult: ({ output }) => String(output).replace(/hunter2/, "[redacted]"),
    });
    const model = mockModel([{ toolCalls: [{ toolName: "leak", input: {} }] }, "done"]);
    await turnOf({ plugins: [leaky], models: scriptedChoices(model) });
    const seen = JSON.stringify(model.doGenerateCalls[1]!.prompt);
    expect(seen).toContain("[redacted]");
    expect(seen).not.toContain("hunter2");
  });

  it("falls back to the second model and fails readably when both fail", async () => {
    const fallback = mockModel(["from fallback"]);
    expect(await turnOf({ models: scriptedChoices(mockModel([new Error("503")]), fallback) })).toMatchObject({ kind: "answer", text: "from fallback" });
    const failed = await turnOf({ models: scriptedChoices(mockModel([new Error("a")]), mockModel([new Error("b")])) });
    // In the agent's words, not core's.
    expect(failed).toEqual({ kind: "answer", state: "TASK_STATE_FAILED", text: assistantPolicy.messages.failure });
  });

  it("writes the exchange once even when the turn step runs twice", async () => {
    const session = new FakeSession();
    const taskId = "t-rerun";
    const object = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const again = mockModel(["second"]);
    const first = await turnOf({ session, taskId, object, models: scriptedChoices(mockModel(["first"])) });
    // The step runs again (its reply was lost): the recorded decision answers, the model is not asked.
    expect(await turnOf({ session, taskId, object, models: scriptedChoices(again) })).toEqual(first);
    expect(again.doGenerateCalls).toHaveLength(0);
    expect(session.messages.map((m) => m.id)).toEqual([`${taskId}:user`, `${taskId}:agent`]);
  });
});
