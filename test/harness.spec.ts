import { exports } from "cloudflare:workers";
import { createAgentHarness, makeDoHelpers, scriptedChatModel, setupRecording } from "@dynamicagents/core/testing";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES, USAGE_KEY } from "@dynamicagents/core/a2a";
import { AgentDB } from "@dynamicagents/core/db";
import { callerObjectName } from "@dynamicagents/core/worker";
import { assistantPolicy } from "../reference/policy.js";
import { captureConsole } from "./support/console-capture.js";
import { GATEKEEPER } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";

// The spec an agent author writes in their own repo: the harness plays the
// gatekeeper, and the model's HTTP is replayed from a cassette per test.
setupRecording();

describe("createAgentHarness", () => {
  it("sends a turn as a gatekeeper does and receives the pushed answer", async () => {
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant" });
    using gatekeeper = harness.interceptGatekeeper();

    const accepted = await harness.send("what's the weather?");
    expect(accepted.status.state).toBe("TASK_STATE_SUBMITTED");

    const done = await gatekeeper.terminal(accepted.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.artifacts[0].parts[0].text).toBe("echo: what's the weather?");
    const push = gatekeeper.pushes.find((p) => p.body.task?.id === accepted.id)!;
    expect(push.headers.get("Content-Type")).toBe("application/a2a+json");
    expect((await harness.call("GetTask", { id: accepted.id })).result.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("keeps two harnesses' callers apart", async () => {
    const alice = createAgentHarness({ worker: exports.default, tenant: "assistant" });
    const bob = createAgentHarness({ worker: exports.default, tenant: "assistant" });
    using gatekeeper = alice.interceptGatekeeper();
    const task = await alice.send("mine");
    expect((await bob.call("GetTask", { id: task.id })).error?.code).toBe(-32001);
    // Let the turn finish inside this test, so its model call is in this test's cassette.
    await gatekeeper.terminal(task.id);
  });
});

describe("usage a provider reports", () => {
  it("counts its cached input and reasoning tokens apart: in the turn's wide log line, the task's usage and the caller's day", async () => {
    using captured = captureConsole();
    const key = `usage-${crypto.randomUUID()}`;
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant", identity: { key } });
    using gatekeeper = harness.interceptGatekeeper();

    const done = await gatekeeper.terminal((await harness.send("how many tokens was that?")).id);
    // As the cassette's recorded answer says: 20 tokens in (10 of them cached), 12 out (4 of them reasoning).
    const usage = { inputTokens: 20, outputTokens: 12, modelCalls: 1, cachedInputTokens: 10, reasoningTokens: 4 };
    expect(done.metadata[USAGE_KEY]).toEqual(usage);
    // By default the turn's figures are logged in its wide turn.finished line (docs/telemetry.md "Which lines").
    const wide = captured.events().find((e) => e.event === "turn.finished" && e.taskId === done.id);
    expect(wide?.data).toMatchObject({ ...usage, summary: { models: { calls: 1, inputTokens: 20, outputTokens: 12 } } });
    const object = env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key })));
    expect(await runInDurableObject(object, (_i, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).usage.ofDay())).toEqual(usage);
  });
});

describe("a scripted model", () => {
  it("proves a tool was used: the call the script made, its result, and the answer built from it", async () => {
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant" });
    const model = scriptedChatModel((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: "current_time", args: { timeZone: "Asia/Tokyo" } }] }
        : `It is ${JSON.parse(request.toolResults.at(-1)!.content).local} in Tokyo.`,
    );
    using gatekeeper = harness.interceptGatekeeper({ model });

    const done = await gatekeeper.terminal((await harness.send("what time is it in Tokyo?")).id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    // What the model was sent: the tool offered first, then its result.
    expect(model.requests[0]!.tools).toContain("current_time");
    expect(model.requests[1]!.toolResults).toEqual([{ toolName: "current_time", content: expect.stringContaining('"timeZone":"Asia/Tokyo"') }]);
    // The result reached the answer.
    const local = JSON.parse(model.requests[1]!.toolResults[0]!.content).local as string;
    expect(done.artifacts[0].parts[0].text).toBe(`It is ${local} in Tokyo.`);
  });

  it("answers from a list, the last reply repeating, and a Response for a failing model", async () => {
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant" });
    const model = scriptedChatModel([new Response("overloaded", { status: 400 })]);
    using gatekeeper = harness.interceptGatekeeper({ model });
    const done = await gatekeeper.terminal((await harness.send("hello")).id);
    // A 400 is no transient failure: the primary and the fallback are each asked once, and the task fails in the agent's words.
    expect(done.status.state).toBe("TASK_STATE_FAILED");
    expect(model.requests.map((r) => r.model)).toEqual(["primary-model", "fallback-model"]);
  });
});

describe("the researcher, end to end", () => {
  it("delegates, runs its subagents, announces progress and pushes the answer", async () => {
    const harness = createAgentHarness({ worker: exports.default, tenant: "researcher" });
    using gatekeeper = harness.interceptGatekeeper();

    const accepted = await harness.send("what is the answer?");
    const done = await gatekeeper.terminal(accepted.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    const progress = gatekeeper.pushes.filter((p) => p.body.statusUpdate?.taskId === accepted.id);
    expect(progress.map((p) => p.body.statusUpdate.status.message.parts[0].text)).toEqual(["working: round 1, 2 subtasks (2 done)"]);
    // Round 2 was shown both summaries of the pages the subagents read.
    expect(done.artifacts[0].parts[0].text).toMatch(/^echo: Results of the subtasks delegated so far:/);
    expect(done.artifacts[0].parts[0].text).toContain("http://pages.test/page-2");
  });
});

describe("harness.answer", () => {
  /** The assistant's model: saves a note (its tool waits for an approval), then says what came of it. */
  const noteTaker = () =>
    scriptedChatModel((request) =>
      request.toolResults.length === 0 ? { toolCalls: [{ name: "save_note", args: { text: "buy milk" } }] } : `outcome: ${request.toolResults[0]!.content}`,
    );

  it("approves: waits for the request, answers it, and the tool runs", async () => {
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant" });
    const model = noteTaker();
    using gatekeeper = harness.interceptGatekeeper({ model });

    const task = await harness.send("remember to buy milk");
    const answered = await harness.answer(task.id, { optionId: "approve" });
    expect(answered.status.state).toBe("TASK_STATE_WORKING");
    const done = await gatekeeper.terminal(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.artifacts[0].parts[0].text).toContain('"saved":"buy milk"');
  });

  it("rejects with a reason: the tool does not run and the model is told, in the agent's words", async () => {
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant" });
    const model = noteTaker();
    using gatekeeper = harness.interceptGatekeeper({ model });

    const task = await harness.send("remember to buy milk");
    await harness.answer(task.id, { optionId: "reject", text: "not now" });
    const done = await gatekeeper.terminal(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.artifacts[0].parts[0].text).not.toContain('"saved"');
    expect(model.requests[1]!.toolResults[0]!.content).toContain(assistantPolicy.hitl.denied);
  });

  it("answers a question in words, and refuses to wait on a task that never asks", async () => {
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant" });
    const model = scriptedChatModel((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: "ask_user", args: { question: "Which city?" } }] }
        : `you said: ${request.toolResults[0]!.content}`,
    );
    using gatekeeper = harness.interceptGatekeeper({ model });
    const task = await harness.send("what's the weather?");
    await harness.answer(task.id, { text: "Paris" });
    expect((await gatekeeper.terminal(task.id)).artifacts[0].parts[0].text).toContain("Paris");

    // A finished task asks nothing: the harness says so rather than waiting out its time.
    await expect(harness.answer(task.id, { optionId: "approve" })).rejects.toThrow(`task ${task.id} ended (TASK_STATE_COMPLETED) without asking anything`);
  });
});

describe("an MCP tool, as an author's spec proves one", () => {
  it("the scripted model calls the server's tool (served by createMcpServer in the pool's outbound service) and answers with its result", async () => {
    // The `mcp` tenant lists the fixture's servers (test/support/mcp-agent.ts), answered by test/support/mcp-fixture.mjs.
    const harness = createAgentHarness({ worker: markerEdge(), tenant: "mcp" });
    const model = scriptedChatModel((request) =>
      request.toolResults.length === 0 ? { toolCalls: [{ name: "docs__lookup", args: { term: "Paris" } }] } : `Looked up: ${request.toolResults[0]!.content}`,
    );
    using gatekeeper = harness.interceptGatekeeper({ model });

    const done = await gatekeeper.terminal((await harness.send("look Paris up")).id);
    expect(model.requests[0]!.tools).toContain("docs__lookup");
    expect(model.requests[1]!.toolResults[0]!.toolName).toBe("docs__lookup");
    expect(done.artifacts[0].parts[0].text).toContain("found: Paris");
  });
});

describe("makeDoHelpers", () => {
  it("runs a body against a fresh object's migrated tables", async () => {
    const { withDb } = makeDoHelpers(env.ASSISTANT);
    const found = await withDb("keeps a task once", (db) => {
      db.tasks.insert({ id: "t1", messageId: "m1", contextId: "c", state: "TASK_STATE_SUBMITTED", statusAt: 1, json: "{}" });
      const prior = db.priorSends.of("m1");
      return prior?.kind === "accepted" ? prior.taskId : undefined;
    });
    expect(found).toBe("t1");
  });
});
