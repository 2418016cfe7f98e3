import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES, USAGE_KEY } from "@dynamicagents/core/a2a";
import { validatePolicy } from "@dynamicagents/core/agent";
import { AgentDB, type SubtaskRow } from "@dynamicagents/core/db";
import { createDelegateTool } from "@dynamicagents/core/subtasks";
import { chatCompletionBody } from "@dynamicagents/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ResearchSubagent } from "../reference/agents.js";
import { researchPolicy } from "../reference/policy.js";
import { callerObjectName } from "@dynamicagents/core/worker";
import { GATEKEEPER, ORIGIN } from "./support/constants.js";
import { chatCompletion, chatToolCall, chatToolCalls, eventually, type ModelCall } from "./support/outbound.js";
import { useTurnHarness } from "./support/turn-harness.js";
import { driven, openTurnOf, type DrivenObject } from "./support/turns.js";
import { call, sendParams } from "./support/rpc.js";

const PAGE = (n: number) => `https://developers.cloudflare.com/page-${n}`;
const researcher = (key: string) => env.RESEARCHER.get(env.RESEARCHER.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "researcher", key })));
const newCaller = () => ({ tenant: "researcher", identity: { key: `caller-${crypto.randomUUID()}` } });

const harness = useTurnHarness(({ outbound }) => {
  for (let n = 1; n <= 40; n++) outbound.pages.set(PAGE(n), () => new Response(`<html><body><p>Page ${n} says ${n * 7}.</p></body></html>`));
});

/** Model calls of the round loop (summaries in subagents are told apart by their instructions). */
const words = researchPolicy.rounds!;
const isSummary = (c: ModelCall) => String(c.messages[0]?.content ?? "").startsWith("Summarise what the page says");
const roundCalls = () => harness.outbound.modelCalls.filter((c) => !isSummary(c));
const summaryCalls = () => harness.outbound.modelCalls.filter(isSummary);
const pageFetches = () => harness.outbound.requests.filter((r) => r.method === "GET" && r.url.startsWith("https://developers.cloudflare.com/"));
const systemPrompt = (c: ModelCall) => String(c.messages.find((m) => m.role === "system")?.content ?? "");
const delegateOf = (...pages: number[]) => ({ subtasks: pages.map((n) => ({ type: "read_page", params: { url: PAGE(n), question: "what does it say?" } })) });

/**
 * A scripted researcher model: round `r`'s reply comes from `rounds[r-1]`
 * (by how many "Results of the subtasks" blocks the prompt carries);
 * summaries echo the page.
 */
function scriptRounds(rounds: Array<(c: ModelCall) => Response>) {
  harness.outbound.model = (c) => {
    if (isSummary(c)) return chatCompletion(`summary of ${String(c.messages.at(-1)?.content).match(/Page \d+ says \d+/)?.[0] ?? "?"}`, c.model);
    const results = c.messages.filter((m) => String(m.content ?? "").startsWith(words.resultsHeader)).length;
    const roundIndex = Math.min(results, rounds.length - 1);
    return rounds[roundIndex]!(c);
  };
}

async function finished() {
  const instances = await eventually(
    () => harness.workflows.get(),
    (found) => found.length > 0,
    "the turn's Workflow",
  );
  await instances[0]!.waitForStatus("complete");
  return harness.outbound.pushes.filter((p) => p.body.task).map((p) => p.body.task);
}

/** The parent's facets, reached from inside it (the spec runs there through runInDurableObject). */
const subagentsOf = (instance: object) => {
  if (!("dynamicAgents" in instance)) throw new Error("not an agent");
  return (instance as { dynamicAgents: { get(cls: typeof ResearchSubagent, name: string): Promise<ResearchSubagent> } }).dynamicAgents;
};

const subtasksOf = (key: string) =>
  runInDurableObject(researcher(key), (instance) => (instance as unknown as { agentDb: { db: unknown } }).agentDb.db).then(() =>
    runInDurableObject(
      researcher(key),
      (_i, state) => state.storage.sql.exec("SELECT id, round, type, status, error FROM subtasks ORDER BY created_at").toArray() as unknown as SubtaskRow[],
    ),
  );

describe("the round policy", () => {
  it("has no defaults: a missing string is a start-up error naming it", () => {
    const delegates = { delegates: true };
    expect(() => validatePolicy({ ...researchPolicy, rounds: { ...words, contract: "" } }, delegates)).toThrow(/agentPolicy\(\) is missing rounds\.contract/);
    expect(() => validatePolicy({ ...researchPolicy, messages: { ...researchPolicy.messages, canceled: " " } }, delegates)).toThrow(/messages\.canceled/);
    expect(() => validatePolicy(undefined, delegates)).toThrow(/messages\.failure, messages\.emptyAnswer, messages\.abandoned/);
    // The round words are required only of an agent that delegates.
    expect(() =>
      validatePolicy({ messages: researchPolicy.messages, hitl: researchPolicy.hitl, parts: researchPolicy.parts }, { delegates: false }),
    ).not.toThrow();
    expect(() => validatePolicy({ messages: researchPolicy.messages, hitl: researchPolicy.hitl, parts: researchPolicy.parts }, delegates)).toThrow(
      /rounds\.contract/,
    );
  });
});

describe("the round loop", () => {
  it("answers in round 1 without delegating", async () => {
    scriptRounds([(c) => chatCompletion("42, from memory", c.model)]);
    const caller = newCaller();
    await call("SendMessage", sendParams("what is six times seven?"), { mint: caller });
    const [task] = await finished();
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts[0].parts[0].text).toBe("42, from memory");
    expect(roundCalls()).toHaveLength(1);
    expect(roundCalls()[0]!.tools).toContain("delegate");
    expect(systemPrompt(roundCalls()[0]!)).toContain(words.contract);
    expect(await subtasksOf(caller.identity.key)).toEqual([]);
  });

  it("runs three subtasks of one round at once, then answers from their results", async () => {
    // A barrier only all three can pass: run one at a time, and none ever does.
    let arrived = 0;
    let open!: () => void;
    const barrier = new Promise<void>((resolve) => (open = resolve));
    for (const n of [1, 2, 3]) {
      harness.outbound.pages.set(PAGE(n), async () => {
        if (++arrived === 3) open();
        await barrier;
        return new Response(`<p>Page ${n} says ${n * 7}.</p>`);
      });
    }
    scriptRounds([(c) => chatToolCall("delegate", delegateOf(1, 2, 3), c.model), (c) => chatCompletion("pages say 7, 14 and 21", c.model)]);
    const caller = newCaller();
    await call("SendMessage", sendParams("what do pages 1-3 say?"), { mint: caller });
    const tasks = await finished();
    expect(tasks.at(-1).status.state).toBe("TASK_STATE_COMPLETED");
    expect(tasks.at(-1).artifacts[0].parts[0].text).toBe("pages say 7, 14 and 21");
    expect(arrived).toBe(3);
    const rows = await subtasksOf(caller.identity.key);
    expect(rows.map((r) => [r.round, r.status])).toEqual([
      [1, "done"],
      [1, "done"],
      [1, "done"],
    ]);
    // Round 2 was shown every result.
    const second = roundCalls()[1]!;
    for (const n of [7, 14, 21]) expect(JSON.stringify(second.messages)).toContain(`says ${n}`);
    // One progress push for the round that delegated.
    const progress = harness.outbound.pushes.filter((p) => p.body.statusUpdate);
    expect(progress).toHaveLength(1);
    expect(progress[0]!.body.statusUpdate.status.message.parts[0].text).toBe("working: round 1, 3 subtasks (3 done)");
  });

  it("leaves only a delegating round's tool call and its result in the conversation: round 2's request holds no empty-answer sentence", async () => {
    scriptRounds([(c) => chatToolCall("delegate", delegateOf(5), c.model), (c) => chatCompletion("page 5 says 35", c.model)]);
    await call("SendMessage", sendParams("what does page 5 say?"), { mint: newCaller() });
    expect((await finished()).at(-1).artifacts[0].parts[0].text).toBe("page 5 says 35");
    const second = roundCalls()[1]!;
    // The model never said the policy's sentence: a real model would read it as its own words.
    expect(second.messages.filter((m) => m.role === "assistant" && m.content === researchPolicy.messages.emptyAnswer)).toEqual([]);
    // What round 1 said is its delegate call, then that call's result, then (as a user message) the subtasks' results.
    const after = second.messages.slice(second.messages.findIndex((m) => m.role === "assistant"));
    expect(after.map((m) => [m.role, m.tool_calls?.map((t) => t.function.name) ?? []])).toEqual([
      ["assistant", ["delegate"]],
      ["tool", []],
      ["user", []],
    ]);
  });

  it("counts the summaries the subagents wrote as the turn's: in the task's usage and the caller's day", async () => {
    scriptRounds([(c) => chatToolCall("delegate", delegateOf(11, 12), c.model), (c) => chatCompletion("both read", c.model)]);
    const model = harness.outbound.model;
    // A summary bills 100 tokens in and 20 out; every other call 1 and 1.
    harness.outbound.model = (c) =>
      isSummary(c) ? Response.json(chatCompletionBody({ content: "a summary", usage: { inputTokens: 100, outputTokens: 20 } }, c.model)) : model(c);
    const caller = newCaller();
    await call("SendMessage", sendParams("read pages 11 and 12"), { mint: caller });
    const task = (await finished()).at(-1);
    expect(summaryCalls()).toHaveLength(2);
    const usage = { inputTokens: 1 + 200 + 1, outputTokens: 1 + 40 + 1, modelCalls: 4 };
    expect(task.metadata[USAGE_KEY]).toEqual(usage);
    expect(await runInDurableObject(researcher(caller.identity.key), (_i, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).usage.ofDay())).toEqual(
      usage,
    );
  });

  it("appends the policy's note in the last round, offers no delegation there, and answers", async () => {
    let round = 0;
    harness.outbound.model = (c) => {
      if (isSummary(c)) return chatCompletion("a summary", c.model);
      round++;
      return c.tools.includes("delegate") ? chatToolCall("delegate", delegateOf(round), c.model) : chatCompletion("final answer under budget", c.model);
    };
    await call("SendMessage", sendParams("dig forever"), { mint: newCaller() });
    const tasks = await finished();
    expect(tasks.at(-1).artifacts[0].parts[0].text).toBe("final answer under budget");
    const calls = roundCalls();
    expect(calls).toHaveLength(3);
    expect(calls[2]!.tools).not.toContain("delegate");
    expect(systemPrompt(calls[2]!)).toContain(words.lastRoundNote);
    expect(systemPrompt(calls[1]!)).not.toContain(words.lastRoundNote);
  });

  it("answers with the policy's message when the last round writes nothing", async () => {
    harness.outbound.model = (c) =>
      isSummary(c)
        ? chatCompletion("s", c.model)
        : c.tools.includes("delegate")
          ? chatToolCall("delegate", delegateOf(9), c.model)
          : chatCompletion("", c.model);
    await call("SendMessage", sendParams("say nothing"), { mint: newCaller() });
    const tasks = await finished();
    expect(tasks.at(-1).artifacts[0].parts[0].text).toBe(researchPolicy.messages.emptyAnswer);
  });

  it("reports an invalid delegation back to the model instead of throwing, and records nothing", async () => {
    let sawError = "";
    harness.outbound.model = (c) => {
      const toolResult = c.messages.find((m) => m.role === "tool");
      if (!toolResult)
        return chatToolCall(
          "delegate",
          {
            subtasks: [
              { type: "read_page", params: { url: "not a url" } },
              { type: "no_such_type", params: {} },
            ],
          },
          c.model,
        );
      sawError = String(toolResult.content);
      return chatCompletion("I will answer without reading", c.model);
    };
    const caller = newCaller();
    await call("SendMessage", sendParams("read a bad page"), { mint: caller });
    const tasks = await finished();
    expect(tasks.at(-1).artifacts[0].parts[0].text).toBe("I will answer without reading");
    expect(sawError).toContain("Nothing was delegated");
    expect(sawError).toContain("subtasks[0] (read_page): url");
    expect(sawError).toContain('unknown type \\"no_such_type\\"');
    expect(await subtasksOf(caller.identity.key)).toEqual([]);
  });
});

describe("durable subtasks", () => {
  /** Holds the turn's Workflow at its first step, so the spec drives the rounds itself. */
  async function heldTurn(text: string) {
    await harness.workflows.modifyAll(async (m) => m.mockStepError({ name: "run" }, new Error("the spec drives this turn")));
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams(text), { mint: caller })).body.result.task;
    const stub = researcher(caller.identity.key);
    const agent: DrivenObject = driven(stub);
    expect(await agent.turnStarted(task.id, ORIGIN)).toEqual({ ok: true, value: { proceed: true, state: "TASK_STATE_WORKING" } });
    return { caller, task, agent, instanceId: await openTurnOf(stub, task.id) };
  }

  it("does not re-run finished subtasks when a round step is retried", async () => {
    scriptRounds([(c) => chatToolCall("delegate", delegateOf(4, 5), c.model), (c) => chatCompletion("done", c.model)]);
    const { task, agent, instanceId } = await heldTurn("two pages");
    const first = await agent.runTurn(task.id, ORIGIN, 1, instanceId);
    expect(first).toEqual({ ok: true, value: { kind: "continue", announce: true } });
    // The round's progress is the task's status, as an event of its own.
    const progress = await agent.deliveryOf(task.id);
    expect(progress.ok && progress.value.status.statusUpdate.status.message?.parts[0]?.text).toBe("working: round 1, 2 subtasks (2 done)");
    const counts = { rounds: roundCalls().length, summaries: summaryCalls().length, fetches: pageFetches().length };
    expect(counts).toEqual({ rounds: 1, summaries: 2, fetches: 2 });
    // The Workflow retries the step (say the reply to it was lost): nothing runs again.
    expect(await agent.runTurn(task.id, ORIGIN, 1, instanceId)).toEqual(first);
    const again = await agent.deliveryOf(task.id);
    expect(again.ok && again.value.status.seq).toBe(progress.ok && progress.value.status.seq);
    expect({ rounds: roundCalls().length, summaries: summaryCalls().length, fetches: pageFetches().length }).toEqual(counts);
    // The answering round makes the terminal write in the same call.
    expect(await agent.runTurn(task.id, ORIGIN, 2, instanceId)).toMatchObject({ ok: true, value: { kind: "finished", state: "TASK_STATE_COMPLETED" } });
  });

  it("a subagent refuses, as a verdict, to resume under another fingerprint, and answers a finished one from its record", async () => {
    const spec = {
      subtaskId: "s-fp",
      taskId: "t-fp",
      type: "read_page",
      params: { url: PAGE(10), question: "what does it say?" },
      fingerprint: "fingerprint-a",
      workspace: { maxFiles: 8, maxFileBytes: 100_000, maxTotalBytes: 1_000_000 },
    };
    const [first, again, other] = await runInDurableObject(researcher(`fp-${crypto.randomUUID()}`), async (instance) => {
      const subagent = await subagentsOf(instance).get(ResearchSubagent, spec.subtaskId);
      return [await subagent.runSubtask(spec), await subagent.runSubtask(spec), await subagent.runSubtask({ ...spec, fingerprint: "fingerprint-b" })];
    });
    expect(first).toMatchObject({ ok: true, value: { status: "done", result: { url: PAGE(10) } } });
    // Asked again: the recorded result, no second fetch.
    expect(again).toEqual(first);
    expect(pageFetches()).toHaveLength(1);
    expect(other).toMatchObject({ ok: false, error: { code: "ERR_SUBAGENT_FINGERPRINT", message: expect.stringMatching(/refuses to resume/) } });
  });

  it("cancel mid-round stops the subagents at their next chunk and ends canceled", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let fetched = 0;
    let reached!: () => void;
    const fetching = new Promise<void>((resolve) => (reached = resolve));
    for (const n of [7, 8]) {
      harness.outbound.pages.set(PAGE(n), async () => {
        if (++fetched === 2) reached();
        await gate;
        return new Response(`<p>Page ${n}</p>`);
      });
    }
    scriptRounds([(c) => chatToolCall("delegate", delegateOf(7, 8), c.model), (c) => chatCompletion("too late", c.model)]);
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("slow pages"), { mint: caller })).body.result.task;
    await fetching;
    const canceled = await call("CancelTask", { id: task.id }, { mint: caller });
    expect(canceled.body.result.status).toMatchObject({ state: "TASK_STATE_CANCELED", message: { parts: [{ text: researchPolicy.messages.canceled }] } });
    release();
    const tasks = await finished();
    expect(tasks).toHaveLength(1);
    expect(tasks[0].status.state).toBe("TASK_STATE_CANCELED");
    // The fetch chunks finished, the summaries after them never started, and no round came after.
    expect(summaryCalls()).toHaveLength(0);
    expect(roundCalls()).toHaveLength(1);
    expect((await subtasksOf(caller.identity.key)).map((r) => r.status)).toEqual(["canceled", "canceled"]);
  });
});

describe("the per-round subtask cap", () => {
  // The researcher runs with the default cap of 16 subtasks per round.
  const CAP = 16;
  const pagesFrom = (first: number, count: number) => Array.from({ length: count }, (_, i) => first + i);

  it("holds across parallel delegate calls of one step: the round gets one call's subtasks, the other call records nothing", async () => {
    scriptRounds([
      (c) =>
        chatToolCalls(
          [
            { name: "delegate", args: delegateOf(...pagesFrom(1, 10)) },
            { name: "delegate", args: delegateOf(...pagesFrom(21, 10)) },
          ],
          c.model,
        ),
      (c) => chatCompletion("answered within the cap", c.model),
    ]);
    const caller = newCaller();
    await call("SendMessage", sendParams("read twenty pages"), { mint: caller });
    const tasks = await finished();
    expect(tasks.at(-1).artifacts[0].parts[0].text).toBe("answered within the cap");

    const rows = await runInDurableObject(
      researcher(caller.identity.key),
      (_i, state) => state.storage.sql.exec("SELECT round, params_json FROM subtasks").toArray() as Array<{ round: number; params_json: string }>,
    );
    expect(rows.length).toBeLessThanOrEqual(CAP);
    expect(rows).toHaveLength(10);
    // All from one of the two calls: which one won the race does not matter.
    const pages = rows.map((r) => Number(/page-(\d+)/.exec(r.params_json)![1])).sort((a, b) => a - b);
    expect([pagesFrom(1, 10), pagesFrom(21, 10)]).toContainEqual(pages);
  });

  it("is enforced by the store, in its transaction, as a verdict", async () => {
    const stub = researcher(`store-${crypto.randomUUID()}`);
    await runInDurableObject(stub, (_i, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      const store = db.subtasks;
      const t1 = "t1";
      db.tasks.insert({ id: t1, messageId: "m1", contextId: "c", state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
      const batch = (n: number) => Array.from({ length: n }, () => ({ id: crypto.randomUUID(), type: "read_page", params: {}, fingerprint: "f" }));
      expect(store.delegate(t1, 1, batch(10), CAP)).toEqual({ recorded: true, count: 10 });
      expect(store.delegate(t1, 1, batch(7), CAP)).toEqual({ recorded: false, existing: 10, max: CAP });
      expect(store.ofRound(t1, 1)).toHaveLength(10);
      expect(store.delegate(t1, 1, batch(6), CAP)).toEqual({ recorded: true, count: 16 });
      // Another round starts from zero.
      expect(store.delegate(t1, 2, batch(16), CAP)).toEqual({ recorded: true, count: 16 });
      expect(store.decision(t1, 1)).toEqual({ kind: "delegate", count: 16 });
    });
  });

  it("never moves a finished subtask again: a second run's late failure cannot overwrite done", async () => {
    await runInDurableObject(researcher(`final-${crypto.randomUUID()}`), (_i, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      db.tasks.insert({ id: "t1", messageId: "m1", contextId: "c", state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
      db.subtasks.delegate("t1", 1, [{ id: "s1", type: "read_page", params: {}, fingerprint: "f" }], CAP);
      expect(db.subtasks.mark("s1", "running")).toBe(true);
      expect(db.subtasks.mark("s1", "done", { result: { ok: 1 } })).toBe(true);
      expect(db.subtasks.mark("s1", "failed", { error: "UNIQUE constraint failed" })).toBe(false);
      expect(db.subtasks.mark("s1", "canceled")).toBe(false);
      expect(db.subtasks.get("s1")).toMatchObject({ status: "done", resultJson: '{"ok":1}', error: null });
    });
  });

  it("tells the model that nothing was delegated by that call, and why", async () => {
    const type = { key: "read_page", description: "reads a page", params: z.object({ url: z.string() }), recipe: async () => null };
    const delegate = createDelegateTool({
      types: new Map([["read_page", type]]),
      maxSubtasks: CAP,
      words: words.delegate,
      record: () => ({ recorded: false, existing: 10, max: CAP }),
    });
    const answer = await (delegate.execute as (i: unknown, o: unknown) => Promise<{ error?: string }>)(
      { subtasks: Array.from({ length: 10 }, () => ({ type: "read_page", params: { url: "https://x.test/" } })) },
      { toolCallId: "c", messages: [] },
    );
    expect(answer.error).toMatch(
      /^Nothing was delegated by this call: this round already has 10 subtasks, and 10 more would pass the limit of 16 per round\. Delegate at most 6 more/,
    );
  });
});
