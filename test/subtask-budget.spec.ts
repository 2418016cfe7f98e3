import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES, USAGE_KEY } from "@dynamicagents/core/a2a";
import type { SubagentObject, SubtaskSpec } from "@dynamicagents/core/boundary";
import { AgentDB } from "@dynamicagents/core/db";
import type { AgentEvent } from "@dynamicagents/core/telemetry";
import { chatCompletionBody } from "@dynamicagents/core/testing";
import { callerObjectName } from "@dynamicagents/core/worker";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MarkerSubagent, mark } from "./support/agents.js";
import { captureConsole, type CapturedConsole } from "./support/console-capture.js";
import { GATEKEEPER } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";
import { useMarkerHarness } from "./support/turn-harness.js";

// A subtask's recipe calls the model through RecipeContext.generate: its
// tokens are the turn's and the caller's, counted once, under the parent's
// budgets (test/support/agents.ts: the marker researcher's turn budget is
// 1,000 tokens, its daily one 1,500; every other call bills 2).

const harness = useMarkerHarness();
const edge = markerEdge();
let captured: CapturedConsole;
beforeEach(() => {
  captured = captureConsole();
});
afterEach(() => captured[Symbol.dispose]());

/** What one recipe call bills: more than the turn's budget on its own. */
const RECIPE_USAGE = { inputTokens: 1_200, outputTokens: 300 };

function newCaller() {
  const key = `caller-${crypto.randomUUID()}`;
  const ns = env.MARKER_RESEARCHER!;
  return {
    mint: { tenant: "marker-researcher", identity: { key } },
    stub: ns.get(ns.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "marker-researcher", key }))),
  };
}
type Caller = ReturnType<typeof newCaller>;

const isRecipeCall = (c: ModelCall) => c.messages.some((m) => m.role === "user" && String(m.content).startsWith(mark("recipe-call")));
const recipeCalls = () => harness.outbound.modelCalls.filter(isRecipeCall);

/** Round one delegates one model_task making `calls` calls; each recipe call bills {@link RECIPE_USAGE}; round two answers. */
function script(calls: number) {
  harness.outbound.model = (c) => {
    if (isRecipeCall(c)) return Response.json(chatCompletionBody({ content: `recipe answer ${recipeCalls().length}`, usage: RECIPE_USAGE }, c.model));
    return c.tools.includes("delegate")
      ? chatToolCall("delegate", { subtasks: [{ type: "model_task", params: { calls } }] }, c.model)
      : chatCompletion("answered", c.model);
  };
}

async function finished(who: Caller, text: string) {
  const sent = await call("SendMessage", sendParams(text), { mint: who.mint, worker: edge.fetch });
  const id: string = sent.body.result.task.id;
  const push = await eventually(
    () => harness.outbound.pushes.find((p) => p.body.task?.id === id),
    (p) => p !== undefined,
    "the terminal push",
  );
  return push!.body.task;
}

const today = (who: Caller) => runInDurableObject(who.stub, (_i, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).usage.ofDay());
const subtaskRows = (who: Caller) =>
  runInDurableObject(who.stub, (_i, state) =>
    state.storage.sql
      .exec<{ id: string; status: string; error: string | null; model_calls: number }>("SELECT id, status, error, model_calls FROM subtasks")
      .toArray(),
  );
const modelCallEvents = (taskId: string) => captured.events().filter((e): e is AgentEvent => e.event === "model.call" && e.taskId === taskId);

describe("a subtask's model calls", () => {
  it("count in the task's usage, the caller's daily total and the events; past the daily budget the next send is refused", async () => {
    script(1);
    const who = newCaller();
    const task = await finished(who, "research it");
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(recipeCalls()).toHaveLength(1);
    // The delegating round, the recipe's call and the answering round.
    const usage = { inputTokens: 1 + 1_200 + 1, outputTokens: 1 + 300 + 1, modelCalls: 3 };
    expect(task.metadata[USAGE_KEY]).toEqual(usage);
    expect(await today(who)).toEqual(usage);
    const [row] = await subtaskRows(who);
    expect(row).toMatchObject({ status: "done", model_calls: 1 });
    // The recipe's call is an event of the task, as the rounds' are, naming its subtask.
    expect(modelCallEvents(task.id).map((e) => e.data)).toEqual([
      expect.objectContaining({ round: 1, inputTokens: 1, outputTokens: 1 }),
      {
        round: 1,
        subtaskId: row!.id,
        ...RECIPE_USAGE,
        model: expect.any(String),
        fallback: false,
        retries: 0,
        outcome: "ok",
        steps: 1,
        durationMs: expect.any(Number),
      },
      expect.objectContaining({ round: 2, inputTokens: 1, outputTokens: 1 }),
    ]);

    // 1,504 tokens today: past the daily budget of 1,500.
    const calls = harness.outbound.modelCalls.length;
    const refused = await call("SendMessage", sendParams("once more"), { mint: who.mint, worker: edge.fetch });
    expect(refused.status).toBe(429);
    expect(refused.body.error.data[0]).toMatchObject({ reason: "QUOTA_EXCEEDED", metadata: { limit: "tokensPerCallerPerDay", spent: "1504" } });
    expect(harness.outbound.modelCalls).toHaveLength(calls);
  });

  it("are refused past the turn's budget: the subtask fails saying so, and the round goes on to an answer", async () => {
    script(2);
    const who = newCaller();
    const task = await finished(who, "research it twice");
    // The first call spent 1,500 of the 998 tokens the turn had left: the second was never sent.
    expect(recipeCalls()).toHaveLength(1);
    const [row] = await subtaskRows(who);
    expect(row).toMatchObject({ status: "failed", model_calls: 1 });
    expect(row!.error).toBe(
      "a model call was refused: the subtask's calls have spent 1500 of the 998 tokens left in the turn's token budget (turn.maxTokensPerTurn)",
    );
    // The next round was shown the failure, and answered.
    const last = harness.outbound.modelCalls.at(-1)!;
    expect(JSON.stringify(last.messages)).toContain("turn.maxTokensPerTurn");
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts[0].parts[0].text).toBe("answered");
    expect(task.metadata[USAGE_KEY]).toEqual({ inputTokens: 1_202, outputTokens: 302, modelCalls: 3 });
  });

  it("leave the rounds after them what is left of the turn's budget: spent, the answering round stops after one step", async () => {
    harness.outbound.model = (c) => {
      // Round 1 delegates, and its step alone spends the turn's budget (1,500 of 1,000).
      if (c.tools.includes("delegate"))
        return Response.json(
          chatCompletionBody(
            { toolCalls: [{ name: "delegate", arguments: { subtasks: [{ type: "echo_task", params: { say: "hi" } }] } }], usage: RECIPE_USAGE },
            c.model,
          ),
        );
      // Round 2 would call a tool first (its result names the artifact it added), then answer.
      return JSON.stringify(c.messages).includes("artifactId")
        ? chatCompletion("answered after the tool", c.model)
        : chatToolCall("make_data", { n: 2 }, c.model);
    };
    const task = await finished(newCaller(), "research it");
    // One step, the tool's: the round ends there, with no text, in the agent's words for that.
    expect(harness.outbound.modelCalls.filter((c) => !c.tools.includes("delegate"))).toHaveLength(1);
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts.find((a: { name?: string }) => a.name === "answer")?.parts[0].text).toBe(mark("empty-answer"));
  });

  it("are counted once: a run answered again from the subagent's record, and its report counted again, add nothing", async () => {
    script(1);
    const who = newCaller();
    const spec: SubtaskSpec = {
      subtaskId: "s-once",
      taskId: "t-once",
      type: "model_task",
      params: { calls: 1 },
      fingerprint: "fingerprint-once",
      workspace: { maxFiles: 8, maxFileBytes: 64, maxTotalBytes: 1_024 },
      budget: { tokens: 10_000, counted: 0, limit: "turn.maxTokensPerTurn" },
    };
    const counted = await runInDurableObject(who.stub, async (instance, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      db.tasks.insert({ id: spec.taskId, messageId: "m-once", contextId: "c-once", state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
      db.subtasks.delegate(spec.taskId, 1, [{ id: spec.subtaskId, type: spec.type, params: spec.params, fingerprint: spec.fingerprint }], 16);
      const agents = (instance as unknown as { dynamicAgents: { get(cls: typeof MarkerSubagent, name: string): Promise<SubagentObject> } }).dynamicAgents;
      const subagent = await agents.get(MarkerSubagent, spec.subtaskId);
      const first = await subagent.runSubtask(spec);
      const again = await subagent.runSubtask(spec);
      if (!first.ok || !again.ok) throw new Error("the subagent refused");
      expect(again.value).toEqual(first.value);
      return [db.countSubtaskCalls(spec.subtaskId, spec.taskId, first.value.calls), db.countSubtaskCalls(spec.subtaskId, spec.taskId, again.value.calls)];
    });
    // One call, made once; the second report starts past it.
    expect(recipeCalls()).toHaveLength(1);
    expect(counted).toEqual([0, 1]);
    expect(await today(who)).toEqual({ ...RECIPE_USAGE, modelCalls: 1 });
  });
});
