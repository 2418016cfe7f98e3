import { env } from "cloudflare:workers";
import { resolveConfig } from "@dynamicagents/core/agent";
import type { TurnObject } from "@dynamicagents/core/boundary";
import { callerObjectName } from "@dynamicagents/core/worker";
import { analyticsSink, TurnLog, Telemetry, type AgentEvent, type TurnLogLine } from "@dynamicagents/core/telemetry";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { analyticsPoints, observed } from "./support/agents.js";
import { captureConsole, type CapturedConsole } from "./support/console-capture.js";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { chatCompletion, chatToolCall, eventually } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";
import { useMarkerHarness } from "./support/turn-harness.js";

// The log's default (docs/telemetry.md "Which lines"): a turn writes two
// lines, `task.accepted` and a wide `turn.finished` with every figure its
// events carried; refusals, failures and dead letters keep their own; the
// plugins' subscribers and Analytics Engine still get every event. The
// agent here (tenant `two-lines`) is the observed agent of
// test/telemetry.spec.ts, whose log takes one line per event, with the
// default left as it is.

const harness = useMarkerHarness();
const edge = markerEdge();

const newCaller = () => ({ tenant: "two-lines", identity: { key: `caller-${crypto.randomUUID()}`, name: "Ada" } });
type Caller = ReturnType<typeof newCaller>;

let captured: CapturedConsole;
beforeEach(() => {
  captured = captureConsole();
  observed.events.length = 0;
  analyticsPoints.length = 0;
});
afterEach(() => captured[Symbol.dispose]());

const linesOf = (taskId: string): AgentEvent[] => captured.events().filter((event) => event.taskId === taskId);
const wideOf = (taskId: string) => linesOf(taskId).find((event) => event.event === "turn.finished") as TurnLogLine | undefined;

async function send(caller: Caller, text: string, pushUrl = PUSH_URL) {
  const reply = await call("SendMessage", sendParams(text, undefined, pushUrl), { mint: caller, worker: edge.fetch });
  expect(reply.body.error).toBeUndefined();
  return reply.body.result.task as { id: string; contextId: string };
}

/** The turn's wide line, once the Workflow wrote it (after the run step's push). */
const wideLine = async (taskId: string) =>
  (await eventually(
    () => wideOf(taskId),
    (line) => line !== undefined,
    `the wide line of ${taskId}`,
  ))!;

describe("a single-inference turn with one push config", () => {
  it("writes exactly two event lines, the wide one carrying the turn's figures; subscribers and Analytics Engine get every event", async () => {
    const caller = newCaller();
    const task = await send(caller, "hello");
    const wide = await wideLine(task.id);
    // Settled: the Workflow's last step (the push) is done, and nothing else follows.
    await eventually(
      () => observed.events.filter((e) => e.taskId === task.id && e.event === "turn.finished"),
      (found) => found.length === 1,
      "the subscriber's turn.finished",
    );
    await new Promise((resolve) => setTimeout(resolve, 50));

    // Fails when the log is left one line per event (six or more lines for this turn).
    expect(linesOf(task.id).map((e) => e.event)).toEqual(["task.accepted", "turn.finished"]);
    const push = harness.outbound.pushes.find((p) => p.body.task?.id === task.id)!;
    expect(push).toBeDefined();
    expect(wide).toMatchObject({ type: "dynamicagents.event", v: 1, tenant: "two-lines", taskId: task.id, contextId: task.contextId });
    expect(wide.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(wide.turnId).toBeTruthy();
    expect(wide.data).toMatchObject({ state: "TASK_STATE_COMPLETED", modelCalls: 1, inputTokens: 1, outputTokens: 1 });
    const { summary } = wide.data;
    expect(summary.partial).toBeUndefined();
    expect(summary.models).toMatchObject({
      calls: 1,
      models: { "openai-compatible:primary-model": 1 },
      outcomes: { ok: 1 },
      fallbacks: 0,
      retries: 0,
      inputTokens: 1,
      outputTokens: 1,
    });
    expect(summary.rounds).toMatchObject({ count: 1, outcomes: { answer: 1 } });
    expect(summary.pushes).toMatchObject({ attempts: 1, outcomes: { delivered: 1 }, statuses: { 200: 1 } });
    expect(summary.tools.calls).toBe(0);

    // Every event still reached the plugin's subscriber: the object's, each once.
    const heard = observed.events.filter((e) => e.taskId === task.id).map((e) => e.event);
    expect(heard.sort()).toEqual(["model.call", "round.finished", "task.accepted", "turn.finished", "turn.started"]);
    // The subscriber's turn.finished is the same occurrence as the wide line (one id), without the summary.
    const finished = observed.events.find((e) => e.taskId === task.id && e.event === "turn.finished")!;
    expect(finished.eventId).toBe(wide.eventId);
    expect(finished.data).not.toHaveProperty("summary");
    // …and Analytics Engine got the object's numeric events: the model call and the finished turn.
    expect(analyticsPoints.map((p) => p.blobs?.[0]).sort()).toEqual(["model.call", "turn.finished"]);
  });

  it("a tool's calls are counted in the wide line, by name and outcome", async () => {
    const toolRound = (c: { messages: { role: string }[]; model: string }) =>
      c.messages.some((m) => m.role === "tool") ? chatCompletion("done", c.model) : chatToolCall("read_secret", {}, c.model);
    harness.outbound.model = toolRound;
    const task = await send(newCaller(), "use the tool");
    const wide = await wideLine(task.id);
    expect(wide.data.summary.tools).toMatchObject({ calls: 1, tools: { read_secret: 1 }, outcomes: { ok: 1 }, redacted: 1 });
    expect(wide.data.summary.models).toMatchObject({ calls: 1, steps: 2 });
    // The plugin's own event keeps its line: a plugin chose to say it.
    expect(linesOf(task.id).map((e) => e.event)).toEqual(["task.accepted", "plugin.observing.secret_read", "turn.finished"]);
  });
});

describe("a run step run again after a crash", () => {
  it("gets the wide line again, rebuilt from the stored task with the same id, and the object writes nothing itself", async () => {
    const caller = newCaller();
    const task = await send(caller, "once");
    const wide = await wideLine(task.id);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = linesOf(task.id).map((e) => e.eventId);
    const stub = env.MARKER_TWO_LINES!.get(
      env.MARKER_TWO_LINES!.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "two-lines", key: caller.identity.key })),
    );
    const agent: TurnObject = stub;
    const again = await agent.runTurn(task.id, "https://agents.test", 1, wide.turnId!);
    expect(again.ok && again.value.kind === "finished").toBe(true);
    const rebuilt = (again.ok && again.value.kind === "finished" ? again.value.wide : undefined) as TurnLogLine | undefined;
    // What the step would write: the same occurrence (one id), the durable figures, the rest marked unknown here.
    expect(rebuilt).toMatchObject({ event: "turn.finished", eventId: wide.eventId, taskId: task.id, traceId: wide.traceId });
    expect(rebuilt!.data).toMatchObject({ state: "TASK_STATE_COMPLETED", modelCalls: 1, inputTokens: 1, outputTokens: 1, summary: { partial: true } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(linesOf(task.id).map((e) => e.eventId)).toEqual(before);
  });
});

describe("what keeps a line of its own", () => {
  it("a failing turn: its failed model call is a line, and the wide line says failed", async () => {
    harness.outbound.model = () => new Response("no", { status: 400 });
    const task = await send(newCaller(), "fail me");
    const wide = await wideLine(task.id);
    expect(wide.data.state).toBe("TASK_STATE_FAILED");
    expect(wide.data.summary.models.outcomes).toEqual({ error: 1 });
    const events = linesOf(task.id).map((e) => e.event);
    expect(events).toEqual(["task.accepted", "model.call", "turn.finished"]);
    expect(linesOf(task.id)[1]!.data).toMatchObject({ outcome: "error" });
  });

  it("a refused push: the first attempt is in the wide line, the dead letter a line of its own", async () => {
    const refusing = `${GATEKEEPER}/hooks/refusing-two-lines`;
    harness.outbound.pushReplies.set(refusing, () => new Response(null, { status: 404 }));
    const task = await send(newCaller(), "deliver me", refusing);
    const letter = await eventually(
      () => linesOf(task.id).find((e) => e.event === "push.dead_lettered"),
      (found) => found !== undefined,
      "the dead letter's line",
    );
    expect(letter!.data).toMatchObject({ status: 404 });
    expect(wideOf(task.id)!.data.summary.pushes).toMatchObject({ attempts: 1, outcomes: { permanent: 1 }, statuses: { 404: 1 } });
    expect(linesOf(task.id).map((e) => e.event)).toEqual(["task.accepted", "turn.finished", "push.dead_lettered"]);
  });

  it("a refusal for a cap is a line (no task, no turn)", async () => {
    const caller = newCaller();
    // The observed agent's budget: three plain turns (6 tokens).
    for (const text of ["one", "two", "three"]) await wideLine((await send(caller, text)).id);
    const refused = await call("SendMessage", sendParams("four"), { mint: caller, worker: edge.fetch });
    expect(refused.status).toBe(429);
    const quota = await eventually(
      () => captured.events().filter((e) => e.event === "quota.exceeded" && e.tenant === "two-lines"),
      (found) => found.length > 0,
      "the refusal's line",
    );
    expect(quota[0]!.data).toMatchObject({ limit: "tokensPerCallerPerDay" });
  });
});

describe("the log sink on its own", () => {
  const event = (name: string, taskId: string, data: object): AgentEvent =>
    ({ type: "dynamicagents.event", v: 1, event: name, eventId: crypto.randomUUID(), at: new Date().toISOString(), taskId, data }) as AgentEvent;
  const model = { round: 1, model: "m", fallback: false, retries: 0, outcome: "ok", steps: 1, inputTokens: 3, outputTokens: 4, durationMs: 5 };
  const finished = { state: "TASK_STATE_COMPLETED", durationMs: 9, modelCalls: 1, inputTokens: 3, outputTokens: 4 };

  it("with eventLines, one line per event; without, the turn's events fold into turn.finished", () => {
    for (const eachEvent of [true, false]) {
      const written: AgentEvent[] = [];
      const log = new TurnLog(
        () => eachEvent,
        (e) => void written.push(e),
      );
      for (const e of [event("task.accepted", "t", {}), event("turn.started", "t", {}), event("model.call", "t", model), event("turn.finished", "t", finished)])
        log.sink(e);
      if (eachEvent) expect(written.map((e) => e.event)).toEqual(["task.accepted", "turn.started", "model.call", "turn.finished"]);
      else {
        expect(written.map((e) => e.event)).toEqual(["task.accepted", "turn.finished"]);
        expect((written[1] as TurnLogLine).data.summary.models).toMatchObject({ calls: 1, inputTokens: 3, outputTokens: 4 });
      }
    }
  });

  it("a turn seen from part way (an isolate evicted mid-turn) still gets its wide line, marked partial", () => {
    const written: AgentEvent[] = [];
    const log = new TurnLog(
      () => false,
      (e) => void written.push(e),
    );
    log.sink(event("model.call", "t", model));
    log.sink(event("turn.finished", "t", finished));
    expect(written).toHaveLength(1);
    expect((written[0] as TurnLogLine).data.summary).toMatchObject({ partial: true, models: { calls: 1 } });
    // And one with no event at all before its end: the durable figures, partial.
    log.sink(event("turn.finished", "u", finished));
    expect((written[1] as TurnLogLine).data).toMatchObject({ modelCalls: 1, summary: { partial: true, models: { calls: 0 } } });
  });

  it("a wide line handed over and never taken is written when released, once", () => {
    const written: AgentEvent[] = [];
    const log = new TurnLog(
      () => false,
      (e) => void written.push(e),
    );
    log.handOver("t");
    log.sink(event("turn.finished", "t", finished));
    expect(written).toHaveLength(0);
    log.release("t");
    log.release("t");
    expect(written.map((e) => e.event)).toEqual(["turn.finished"]);
  });

  it("Analytics Engine beside the log still gets every numeric event", async () => {
    const points: string[] = [];
    const log = new TurnLog(
      () => false,
      () => {},
    );
    const telemetry = new Telemetry({ sinks: [log.sink, analyticsSink({ writeDataPoint: (p) => void points.push(p.blobs![0]!) })] });
    const scope = { tenant: "x", taskId: "t" };
    await telemetry.emit("task.accepted", scope, { messageId: "m", stream: false, pushConfigs: 0 }, ["a"]);
    await telemetry.emit("model.call", scope, model as never, ["m"]);
    await telemetry.emit("turn.finished", scope, finished, ["f"]);
    expect(points).toEqual(["model.call", "turn.finished"]);
  });
});

describe("the setting", () => {
  it("defaults to two lines a turn; eventLines: true restores one per event", () => {
    expect(resolveConfig({}).telemetry.eventLines).toBe(false);
    expect(resolveConfig({ telemetry: { eventLines: true } }).telemetry.eventLines).toBe(true);
    // The specs run the reference agents at that default (only `npm start` sets EVENT_LINES); a marker agent
    // that a spec reads every event of opts in (EVERY_LINE, test/support/agents.ts).
    expect(env.EVENT_LINES).toBeUndefined();
  });
});
