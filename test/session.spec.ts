import { env } from "cloudflare:workers";
import { introspectWorkflow, runInDurableObject } from "cloudflare:test";
import { bindSession, resolveConfig, runSessionTurn, type SessionMessage } from "@dynamicagents/core/agent";
import { createAgentRuntime, definePlugin } from "@dynamicagents/core/plugin";
import { FakeSession, mockModel, scriptedChoices } from "@dynamicagents/core/testing";
import type { Sessions } from "agents/sessions";
import { tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { interceptOutbound } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";

const config = resolveConfig({ turn: { maxSteps: 3 } });
const turnOf = (over: Partial<Parameters<typeof runSessionTurn>[0]>) =>
  runSessionTurn({
    session: new FakeSession(),
    config,
    env: {},
    soul: "You are a test agent.",
    tools: {},
    taskId: crypto.randomUUID(),
    text: "hello",
    shouldHandle: async () => true,
    ...over,
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
    const result = await turnOf({ shouldHandle: async () => false, models: scriptedChoices(model) });
    expect(result).toEqual({ kind: "declined" });
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it("ANDs the plugins' gates, and a throwing gate counts as yes", async () => {
    const gate = (answer: boolean | "throw") =>
      definePlugin({
        key: `gate-${Math.random()}`,
        shouldHandleTurn: () => {
          if (answer === "throw") throw new Error("gate bug");
          return answer;
        },
      });
    const runtime = (...answers: Array<boolean | "throw">) => createAgentRuntime({ plugins: answers.map(gate), env: {}, config });
    expect(await runtime(true, "throw").shouldHandleTurn({ text: "x", taskId: "t" })).toBe(true);
    expect(await runtime(true, false).shouldHandleTurn({ text: "x", taskId: "t" })).toBe(false);
    const model = mockModel(["answered"]);
    const result = await turnOf({ shouldHandle: () => runtime("throw").shouldHandleTurn({ text: "x", taskId: "t" }), models: scriptedChoices(model) });
    expect(result).toMatchObject({ kind: "answered", text: "answered" });
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
    const result = await turnOf({ tools: c.tools, models: scriptedChoices(model) });
    expect(result).toMatchObject({ kind: "answered", text: "the count is 1", steps: 2 });
    expect(c.calls()).toBe(1);
    expect(JSON.stringify(model.doGenerateCalls[1]!.prompt)).toContain('"tool-result"');
  });

  it("stops at its step bound when the model never stops calling tools", async () => {
    const c = counter();
    const model = mockModel([{ toolCalls: [{ toolName: "count", input: {} }] }]);
    const result = await turnOf({ tools: c.tools, models: scriptedChoices(model) });
    expect(model.doGenerateCalls).toHaveLength(3);
    expect(result).toMatchObject({ kind: "answered", steps: 3 });
  });

  it("stops once the turn's token budget is spent", async () => {
    const c = counter();
    const model = mockModel([{ toolCalls: [{ toolName: "count", input: {} }], tokens: 400 }]);
    await turnOf({ tools: c.tools, models: scriptedChoices(model), config: resolveConfig({ turn: { maxSteps: 10, maxTokensPerTurn: 1000 } }) });
    expect(model.doGenerateCalls).toHaveLength(3);
  });

  it("shows the model a redacted tool result", async () => {
    const runtime = createAgentRuntime({
      plugins: [
        definePlugin({
          key: "leaky",
          toolFamilies: { leak: () => ({ tools: { leak: tool({ inputSchema: z.object({}), execute: async () => "password=hunter2" }) } }) },
          onToolResult: ({ output }) => String(output).replace(/hunter2/, "[redacted]"),
        }),
      ],
      env: {},
      config,
    });
    const model = mockModel([{ toolCalls: [{ toolName: "leak", input: {} }] }, "done"]);
    await turnOf({ tools: runtime.tools({ taskId: "t", origin: "https://o.test" }), models: scriptedChoices(model) });
    const seen = JSON.stringify(model.doGenerateCalls[1]!.prompt);
    expect(seen).toContain("[redacted]");
    expect(seen).not.toContain("hunter2");
  });

  it("falls back to the second model and fails readably when both fail", async () => {
    const fallback = mockModel(["from fallback"]);
    expect(await turnOf({ models: scriptedChoices(mockModel([new Error("503")]), fallback) })).toMatchObject({ kind: "answered", text: "from fallback" });
    const failed = await turnOf({ models: scriptedChoices(mockModel([new Error("a")]), mockModel([new Error("b")])) });
    expect(failed).toMatchObject({ kind: "failed", message: expect.stringMatching(/^Sorry/) });
  });

  it("writes the exchange once even when the turn step runs twice", async () => {
    const session = new FakeSession();
    const taskId = "t-rerun";
    await turnOf({ session, taskId, models: scriptedChoices(mockModel(["first"])) });
    await turnOf({ session, taskId, models: scriptedChoices(mockModel(["second"])) });
    expect(session.messages.map((m) => m.id)).toEqual([`${taskId}:user`, `${taskId}:agent`]);
  });
});
