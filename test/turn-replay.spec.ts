import { env } from "cloudflare:workers";
import type { WorkflowInstanceIntrospector } from "cloudflare:test";
import { HITL_REQUEST_TYPE } from "@dynamicagents/core/a2a";
import { describe, expect, it } from "vitest";
import { researchPolicy } from "../reference/policy.js";
import recorded010 from "./fixtures/turn-steps/0.1.0.json";
import { ORIGIN } from "./support/constants.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

// A turn Workflow's steps are recorded by the engine and handed back to an
// instance that runs again, also to the next version of the code after a
// deploy (src/turn/turn-steps.ts). Each fixture under test/fixtures/turn-steps
// holds what one version recorded for three typical turns; every one is
// replayed here against this version's Workflow, which must end each turn as
// the recording did without asking the caller's object anything again. The
// newest fixture must have the shapes this version records: a change to a
// step result's shape adds a fixture (README "Updating a deployment").

interface RecordedTurn {
  /** What the turn was. */
  about: string;
  /** The tenant (and so the caller's object) it ran for. */
  tenant: "assistant" | "researcher";
  /** Each step's result, in order (`index`: the step's nth run under that name). */
  steps: Array<{ name: string; index?: number; result: unknown }>;
  /** The events the turn waited for, as they arrived. */
  events: Array<{ type: string; payload: unknown }>;
  /** What the instance returned. */
  output: unknown;
}

/** Every version's recording, oldest first; the last is this version's. */
const RECORDINGS: Array<{ version: string; turns: RecordedTurn[] }> = [recorded010 as { version: string; turns: RecordedTurn[] }];

const harness = useTurnHarness();
const PAGE = "https://developers.cloudflare.com/page-1";
const newCaller = (tenant: string) => ({ tenant, identity: { key: `caller-${crypto.randomUUID()}` } });
const toolMessages = (c: ModelCall) => c.messages.filter((m) => m.role === "tool");
const isSummary = (c: ModelCall) => String(c.messages[0]?.content ?? "").startsWith("Summarise what the page says");

async function onlyInstance(): Promise<WorkflowInstanceIntrospector> {
  const [instance] = await eventually(
    () => harness.workflows.get(),
    (found) => found.length === 1,
    "the turn's Workflow",
  );
  return instance!;
}

async function recorded(instance: WorkflowInstanceIntrospector, steps: Array<{ name: string; index?: number }>) {
  const out: RecordedTurn["steps"] = [];
  for (const step of steps) out.push({ ...step, result: await instance.waitForStepResult(step) });
  return out;
}

/** This version's recording of the three turns, live: the object, the Workflow and the fake network of the specs. */
const TURNS: Record<string, () => Promise<RecordedTurn>> = {
  async "a one-round answer, pushed at once"() {
    await call("SendMessage", sendParams("hello"), { mint: newCaller("assistant") });
    const instance = await onlyInstance();
    await instance.waitForStatus("complete");
    return { about: "", tenant: "assistant", steps: await recorded(instance, [{ name: "run" }]), events: [], output: await instance.getOutput() };
  },

  async "a question parked, answered, then the answer pushed"() {
    harness.outbound.model = (c) =>
      toolMessages(c).length === 0 ? chatToolCall("ask_user", { question: "Which city?" }, c.model) : chatCompletion("Paris it is", c.model);
    const caller = newCaller("assistant");
    const task = (await call("SendMessage", sendParams("weather?"), { mint: caller })).body.result.task;
    const parked = await eventually(
      async () => (await call("GetTask", { id: task.id }, { mint: caller })).body.result,
      (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED",
      "the question",
    );
    const { requestId } = parked.status.message.parts.find((p: { data?: { type?: string } }) => p.data?.type === HITL_REQUEST_TYPE).data;
    const answer = { messageId: crypto.randomUUID(), role: "ROLE_USER", taskId: task.id, parts: [{ text: "Paris" }] };
    await call("SendMessage", { message: answer, configuration: { returnImmediately: true } }, { mint: caller });
    const instance = await onlyInstance();
    await instance.waitForStatus("complete");
    const steps = await recorded(instance, [{ name: "run" }, { name: "ask 1" }, { name: "resume 1" }, { name: "run round 1 after 1" }]);
    const type = (steps[0]!.result as { value: { eventType: string } }).value.eventType;
    return { about: "", tenant: "assistant", steps, events: [{ type, payload: { requestId } }], output: await instance.getOutput() };
  },

  async "a round that delegated, its progress pushed, then the answer"() {
    harness.outbound.pages.set(PAGE, () => new Response("<html><body><p>Page 1 says 7.</p></body></html>"));
    harness.outbound.model = (c) => {
      if (isSummary(c)) return chatCompletion("it says 7", c.model);
      const delegated = c.messages.some((m) => String(m.content ?? "").startsWith(researchPolicy.rounds!.resultsHeader));
      return delegated
        ? chatCompletion("The page says 7.", c.model)
        : chatToolCall("delegate", { subtasks: [{ type: "read_page", params: { url: PAGE, question: "what does it say?" } }] }, c.model);
    };
    await call("SendMessage", sendParams("what does page 1 say?"), { mint: newCaller("researcher") });
    const instance = await onlyInstance();
    await instance.waitForStatus("complete");
    const steps = await recorded(instance, [{ name: "run" }, { name: "progress 1" }, { name: "run round 2" }]);
    return { about: "", tenant: "researcher", steps, events: [], output: await instance.getOutput() };
  },
};

/** A recording's shape: its keys, names, kinds and states as they are, every other value by its type. */
function shapeOf(value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((item) => shapeOf(item));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, shapeOf((value as Record<string, unknown>)[k], k)]),
    );
  }
  if (typeof value === "string" && ["about", "tenant", "name", "kind", "state"].includes(key)) return value;
  return typeof value === "boolean" ? value : `<${typeof value}>`;
}

describe("the step results this version records", () => {
  const newest = RECORDINGS.at(-1)!;
  for (const [about, run] of Object.entries(TURNS)) {
    it(`have the shapes of the newest fixture (${newest.version}): ${about}`, async () => {
      const live = { ...(await run()), about };
      const fixture = newest.turns.find((turn) => turn.about === about);
      // A mismatch prints the live recording: a fixture of this version, once the old one is kept for the replay.
      if (JSON.stringify(shapeOf(live)) !== JSON.stringify(shapeOf(fixture))) console.log(JSON.stringify(live));
      expect(shapeOf(live)).toEqual(shapeOf(fixture));
    });
  }
});

describe("a recorded turn replayed to this version", () => {
  for (const { version, turns } of RECORDINGS) {
    for (const turn of turns) {
      it(`ends as recorded by ${version}: ${turn.about}`, async () => {
        await harness.workflows.modifyAll(async (m) => {
          for (const step of turn.steps) await m.mockStepResult({ name: step.name, ...(step.index ? { index: step.index } : {}) }, step.result);
          for (const event of turn.events) await m.mockEvent(event);
        });
        // A task the object never had: a step the recording lacks would ask it, and end otherwise.
        const namespace = turn.tenant === "assistant" ? env.ASSISTANT : env.RESEARCHER;
        const agentId = namespace.idFromName(`replay-${crypto.randomUUID()}`).toString();
        const params = { tenant: turn.tenant, agentId, taskId: crypto.randomUUID(), messageId: crypto.randomUUID(), origin: ORIGIN };
        await env.TURN_WORKFLOW.create({ id: `replay-${crypto.randomUUID()}`, params });
        const instance = await onlyInstance();
        await instance.waitForStatus("complete");
        expect(await instance.getOutput()).toEqual(turn.output);
        // Nothing ran again: no model call, no push.
        expect({ models: harness.outbound.modelCalls.length, pushes: harness.outbound.pushes.length }).toEqual({ models: 0, pushes: 0 });
      });
    }
  }
});
