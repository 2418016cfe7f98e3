// The dev console of `npm start` (scripts/dev/events.mjs, console-model.mjs,
// console.mjs), offline: event lines of the catalogue's shape
// (src/telemetry/catalogue.ts) as the Worker logs them, the model the page is
// built from, and the console's HTTP side on a real dev gatekeeper with a
// scripted session standing in for the agent.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEAD_LETTERS_KEY, HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE } from "../../src/a2a/wire.ts";
import { EVENT_LINE_TYPE } from "../../src/telemetry/catalogue.ts";
import { serveConsole } from "../../scripts/dev/console.mjs";
import { conversationsOf, createEventLog, taskDetail, taskSummary, timelineEntry, usageOf } from "../../scripts/dev/console-model.mjs";
import { waterfallOf } from "../../scripts/dev/console-waterfall.mjs";
import { messageText } from "../../scripts/dev/session.mjs";
import { describeEvent, parseEventLine } from "../../scripts/dev/events.mjs";
import { startGatekeeper } from "../../scripts/dev/gatekeeper.mjs";
import { RpcFailed } from "../../scripts/dev/session.mjs";

const TASK = "0dd04eeb-1111-4222-8333-944445555666";
const CONTEXT = "6375b78c-aaaa-4bbb-8ccc-ddddeeeeffff";
let sequence = 0;

/**
 * One event exactly as the Worker's JSON-line sink writes it (docs/telemetry.md "The log line").
 * @param {string} event
 * @param {Record<string, unknown>} data
 * @param {{ at?: string, taskId?: string, turnId?: string, eventId?: string }} [scope]
 */
function workerEvent(event, data, scope = {}) {
  sequence++;
  return {
    type: EVENT_LINE_TYPE,
    v: 1,
    event,
    eventId: scope.eventId ?? `e${sequence.toString(16).padStart(8, "0")}`,
    at: scope.at ?? new Date(Date.UTC(2026, 11, 2, 5, 0, 0, sequence)).toISOString(),
    tenant: "assistant",
    caller: "9b1e".repeat(16),
    taskId: scope.taskId ?? TASK,
    contextId: CONTEXT,
    turnId: scope.turnId ?? "turn-1",
    data,
  };
}
const line = (event) => JSON.stringify(event);

/** A whole turn's events, as main's catalogue names them. */
function aTurn() {
  return [
    workerEvent("task.accepted", { messageId: "m-1", stream: true, pushConfigs: 1 }),
    workerEvent("turn.started", { instanceId: "turn-1" }),
    workerEvent("model.call", {
      round: 1,
      model: "primary-model",
      fallback: false,
      retries: 0,
      outcome: "ok",
      steps: 2,
      inputTokens: 120,
      outputTokens: 14,
      durationMs: 412,
    }),
    workerEvent("tool.call", { round: 1, tool: "current_time", outcome: "ok", durationMs: 3, redacted: false }),
    workerEvent("hitl.asked", { requestId: "r-1", requestKind: "approval", expiresAt: "2026-12-03T05:00:00.000Z" }),
    workerEvent("hitl.answered", { requestId: "r-1", outcome: "approved", optionId: "approve" }),
    workerEvent("model.call", {
      round: 1,
      model: "primary-model",
      fallback: true,
      retries: 1,
      outcome: "ok",
      steps: 1,
      inputTokens: 200,
      outputTokens: 30,
      durationMs: 588,
    }),
    workerEvent("round.finished", { round: 1, outcome: "answer", durationMs: 1100 }),
    workerEvent("turn.finished", { state: "TASK_STATE_COMPLETED", durationMs: 1300, modelCalls: 2, inputTokens: 320, outputTokens: 44 }),
    workerEvent("push.attempt", { configId: "gk-1", seq: 5, attempt: 1, status: 404, outcome: "permanent", durationMs: 9 }),
    workerEvent("push.dead_lettered", { configId: "gk-1", seq: 5, status: 404 }),
  ];
}

describe("parseEventLine", () => {
  it("reads an event line as the Worker's sink writes it and wrangler passes it on", () => {
    const event = workerEvent("turn.started", { instanceId: "i-1" });
    expect(parseEventLine(line(event))).toEqual(event);
  });

  it("reads through colour codes, a prefix and trailing blanks around the JSON", () => {
    const event = workerEvent("model.call", {
      round: 1,
      model: "m",
      fallback: false,
      retries: 0,
      outcome: "ok",
      steps: 1,
      inputTokens: 1,
      outputTokens: 2,
      durationMs: 3,
    });
    expect(parseEventLine(`\u001b[2m[wrangler:log]\u001b[0m ${line(event)}  \r`)).toEqual(event);
    expect(parseEventLine(`2026-12-02T05:00:00Z {"x": 1} ${line(event)}`)).toEqual(event);
    expect(parseEventLine(`[worker] ${line(event)}`)).toEqual(event);
  });

  it("ignores every other line: wrangler's own, another JSON log, a half line, a line of another shape", () => {
    const event = workerEvent("turn.started", { instanceId: "i-1" });
    for (const other of [
      "",
      "[wrangler:info] Ready on http://127.0.0.1:8787",
      "[wrangler:info] POST /a2a 200 OK (23ms)",
      '{"level":"info","msg":"dynamicagents.event is mentioned"}',
      line(event).slice(0, 40),
      line({ ...event, type: "something.else" }),
      line({ ...event, v: 2 }),
      line({ ...event, data: [1, 2] }),
      line({ ...event, data: null }),
      line({ ...event, eventId: 7 }),
      JSON.stringify([event]),
    ]) {
      expect(parseEventLine(other), other).toBeUndefined();
    }
  });
});

describe("describeEvent: one readable line per event", () => {
  it("says what each kind of event carries, with its time, tenant and task", () => {
    const lines = aTurn().map(describeEvent);
    expect(lines[0]).toMatch(/^05:00:\d\d\.\d{3} {2}task\.accepted {6}assistant task 0dd04eeb {2}message m-1, streaming, 1 push config$/);
    expect(lines).toContainEqual(
      expect.stringContaining("model.call         assistant task 0dd04eeb  round 1, primary-model: ok, 2 steps, 120 in / 14 out tokens, 412 ms"),
    );
    expect(lines).toContainEqual(expect.stringContaining("round 1, primary-model (fallback): ok, 1 step, 200 in / 30 out tokens, 588 ms, 1 retry"));
    expect(lines).toContainEqual(expect.stringContaining("tool.call          assistant task 0dd04eeb  round 1, current_time: ok, 3 ms"));
    expect(lines).toContainEqual(expect.stringContaining("hitl.asked         assistant task 0dd04eeb  approval r-1, open until 2026-12-03T05:00:00.000Z"));
    expect(lines).toContainEqual(expect.stringContaining("hitl.answered      assistant task 0dd04eeb  r-1: approved"));
    expect(lines).toContainEqual(
      expect.stringContaining("turn.finished      assistant task 0dd04eeb  completed after 1.3 s: 2 model calls, 320 in / 44 out tokens"),
    );
    expect(lines).toContainEqual(
      expect.stringContaining("push.attempt       assistant task 0dd04eeb  config gk-1, seq 5, attempt 1: permanent (HTTP 404), 9 ms"),
    );
    expect(lines).toContainEqual(expect.stringContaining("push.dead_lettered assistant task 0dd04eeb  config gk-1, seq 5 given up (HTTP 404)"));
  });

  it("shows the fields of an event it has no words for (a plugin's, a newer Worker's), and of one whose fields are not what it expects", () => {
    const plugin = { ...workerEvent("plugin.notes.saved", { chars: 12, kept: true }), taskId: undefined };
    expect(describeEvent(plugin)).toMatch(/^05:00:\d\d\.\d{3} {2}plugin\.notes\.saved assistant {2}chars=12 kept=true$/);
    expect(
      describeEvent(workerEvent("subtask.finished", { round: 2, subtaskId: "s-123456789", type: "read_page", outcome: "done", durationMs: 25_000 })),
    ).toContain("round 2, read_page (subtask s-123456): done, 25.0 s");
    // Message text an agent opted in to is quoted, shortened.
    expect(describeEvent(workerEvent("task.accepted", { messageId: "m", stream: false, pushConfigs: 0, text: "x".repeat(200) }))).toMatch(
      /0 push configs: "x{79}…"$/,
    );
  });
});

describe("the event log", () => {
  it("keeps an event once by its eventId (a replayed step's), a task's events in time order, and tells listeners of new ones only", () => {
    const log = createEventLog();
    const heard = [];
    const stop = log.subscribe((event) => heard.push(event.event));
    const late = workerEvent(
      "turn.finished",
      { state: "TASK_STATE_COMPLETED", durationMs: 1, modelCalls: 0, inputTokens: 0, outputTokens: 0 },
      { at: "2026-12-02T05:00:09.000Z" },
    );
    const early = workerEvent("turn.started", { instanceId: "turn-1" }, { at: "2026-12-02T05:00:01.000Z" });
    expect(log.add(late)).toBe(true);
    expect(log.add(early)).toBe(true);
    expect(log.add({ ...early, at: "2026-12-02T05:00:05.000Z" })).toBe(false);
    expect(log.add(workerEvent("turn.started", { instanceId: "t" }, { taskId: "another-task" }))).toBe(true);
    expect(log.forTask(TASK).map((e) => e.event)).toEqual(["turn.started", "turn.finished"]);
    expect(log.forTask("nobody's")).toEqual([]);
    expect(heard).toEqual(["turn.finished", "turn.started", "turn.started"]);
    stop();
    log.note("gatekeeper.push", { tenant: "assistant", taskId: TASK }, { kind: "task", state: "TASK_STATE_COMPLETED" }, new Date("2026-12-02T05:00:10.000Z"));
    expect(heard).toHaveLength(3);
    const entries = log.forTask(TASK).map(timelineEntry);
    expect(entries.at(-1)).toEqual({
      at: "2026-12-02T05:00:10.000Z",
      event: "gatekeeper.push",
      group: "gatekeeper",
      source: "gatekeeper",
      text: "received a verified task push: completed",
      tenant: "assistant",
      taskId: TASK,
    });
    expect(entries[0]).toMatchObject({ event: "turn.started", group: "turn", source: "worker", text: "instance turn-1" });
    expect(log.size).toBe(4);
  });

  it("drops its oldest events past its limit, from the task index too", () => {
    const log = createEventLog({ limit: 3 });
    const events = [1, 2, 3, 4].map((n) => workerEvent("round.finished", { round: n, outcome: "answer", durationMs: 1 }));
    for (const event of events) log.add(event);
    expect(log.size).toBe(3);
    expect(log.forTask(TASK).map((e) => e.data.round)).toEqual([2, 3, 4]);
    expect(log.recent(2).map((e) => e.data.round)).toEqual([3, 4]);
    // The dropped one is new again if it comes back.
    expect(log.add(events[0])).toBe(true);
  });
});

describe("MCP servers' status", () => {
  /** An mcp.server event as core emits it: the object's, no task. */
  const serverEvent = (data, at, tenant = "assistant") => ({ ...workerEvent("mcp.server", data, { at }), tenant, taskId: undefined, turnId: undefined });

  it("keeps each tenant's servers as their latest mcp.server event says: status, tools, reason", () => {
    const log = createEventLog();
    log.add(serverEvent({ server: "devtools", status: "ready", tools: 2, durationMs: 40 }, "2026-12-02T05:00:01.000Z"));
    log.add(serverEvent({ server: "docs", status: "unavailable", tools: 0, durationMs: 3000, reason: "timeout" }, "2026-12-02T05:00:02.000Z"));
    log.add(serverEvent({ server: "devtools", status: "dropped", tools: 0, durationMs: 0, reason: "session-lost" }, "2026-12-02T05:00:03.000Z"));
    log.add(serverEvent({ server: "devtools", status: "ready", tools: 1, durationMs: 9 }, "2026-12-02T05:00:05.000Z", "researcher"));
    // An older word arriving late changes nothing; an event of another shape is not a server.
    log.add(serverEvent({ server: "docs", status: "ready", tools: 4, durationMs: 1 }, "2026-12-02T05:00:00.500Z"));
    log.add(serverEvent({ status: "ready" }, "2026-12-02T05:00:06.000Z"));
    log.note("mcp.server", { tenant: "assistant" }, { server: "devtools", status: "ready", tools: 9 });
    expect(log.mcpServers()).toEqual([
      { tenant: "assistant", server: "devtools", status: "dropped", tools: 0, reason: "session-lost", at: "2026-12-02T05:00:03.000Z" },
      { tenant: "assistant", server: "docs", status: "unavailable", tools: 0, reason: "timeout", at: "2026-12-02T05:00:02.000Z" },
      { tenant: "researcher", server: "devtools", status: "ready", tools: 1, at: "2026-12-02T05:00:05.000Z" },
    ]);
  });

  it("keeps a server's status past the event cap, and says each event in a line", () => {
    const log = createEventLog({ limit: 2 });
    log.add(serverEvent({ server: "devtools", status: "ready", tools: 2, durationMs: 40 }, "2026-12-02T05:00:01.000Z"));
    for (const n of [1, 2, 3]) log.add(workerEvent("round.finished", { round: n, outcome: "answer", durationMs: 1 }));
    expect(log.mcpServers().map((s) => s.status)).toEqual(["ready"]);
    expect(describeEvent(serverEvent({ server: "devtools", status: "ready", tools: 2, durationMs: 40 }, "2026-12-02T05:00:01.000Z"))).toMatch(
      /mcp\.server +assistant {2}devtools: ready, 2 tools, 40 ms$/,
    );
    expect(
      describeEvent(serverEvent({ server: "docs", status: "unavailable", tools: 0, durationMs: 3000, reason: "timeout" }, "2026-12-02T05:00:01.000Z")),
    ).toMatch(/docs: unavailable \(timeout\), 3\.0 s$/);
  });
});

describe("usageOf", () => {
  it("adds up a task's model calls and counts its tool calls; turn.finished's totals do not count twice", () => {
    expect(usageOf(aTurn())).toEqual({ modelCalls: 2, inputTokens: 320, outputTokens: 44, toolCalls: 1, modelMs: 1000 });
  });

  it("counts a turn by its turn.finished when its model calls were not seen, and nothing the gatekeeper noted", () => {
    const log = createEventLog();
    log.add(
      workerEvent("turn.finished", { state: "TASK_STATE_COMPLETED", durationMs: 1, modelCalls: 3, inputTokens: 900, outputTokens: 90 }, { turnId: "turn-0" }),
    );
    for (const event of aTurn()) log.add(event);
    log.note("gatekeeper.push", { taskId: TASK }, { kind: "task", state: "TASK_STATE_COMPLETED", inputTokens: 5 });
    expect(usageOf(log.forTask(TASK))).toEqual({ modelCalls: 5, inputTokens: 1220, outputTokens: 134, toolCalls: 1, modelMs: 1000 });
    expect(usageOf([])).toEqual({ modelCalls: 0, inputTokens: 0, outputTokens: 0, toolCalls: 0, modelMs: 0 });
  });
});

/** A task as the A2A API answers it (wire JSON). */
function wireTask(overrides = {}) {
  return {
    id: TASK,
    contextId: CONTEXT,
    status: {
      state: "TASK_STATE_COMPLETED",
      timestamp: "2026-12-02T05:00:02.000Z",
      message: { messageId: "a-1", role: "ROLE_AGENT", parts: [{ text: "done" }] },
    },
    history: [
      { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello" }] },
      { messageId: "a-1", role: "ROLE_AGENT", parts: [{ text: "done" }] },
    ],
    artifacts: [{ artifactId: "answer", parts: [{ text: "the answer" }] }],
    ...overrides,
  };
}

const approval = {
  messageId: "s-1",
  role: "ROLE_AGENT",
  parts: [
    { text: "May I run save_note?" },
    {
      data: {
        type: HITL_REQUEST_TYPE,
        requestId: "r-1",
        requestKind: "approval",
        prompt: "May I run save_note?",
        options: [
          { id: "approve", label: "Approve" },
          { id: "reject", label: "Reject" },
        ],
        expiresAt: "2026-12-03T05:00:00.000Z",
      },
    },
  ],
};

describe("tasks as the page shows them", () => {
  it("sums a finished task up: what was asked, the answer, the messages, the dead letters, the timeline and its usage", () => {
    const letters = [{ configId: "gk-1", seq: 5, status: 404, at: "2026-12-02T05:00:03.000Z" }];
    const detail = taskDetail("assistant", wireTask({ metadata: { [DEAD_LETTERS_KEY]: letters } }), aTurn());
    expect(detail).toMatchObject({
      tenant: "assistant",
      id: TASK,
      contextId: CONTEXT,
      state: "TASK_STATE_COMPLETED",
      terminal: true,
      waiting: false,
      asked: "hello",
      reply: "the answer",
      request: undefined,
      deadLetters: 1,
      deadLetterList: letters,
      messages: [
        { role: "user", text: "hello" },
        { role: "agent", text: "done" },
      ],
      usage: { modelCalls: 2, inputTokens: 320, outputTokens: 44 },
    });
    expect(detail.timeline.map((e) => e.event)).toEqual(aTurn().map((e) => e.event));
  });

  it("shows an answer to a request as what was answered, not as its JSON", () => {
    const answer = (data) => messageText({ role: "ROLE_USER", parts: [{ data: { type: HITL_RESPONSE_TYPE, requestId: "r-1", ...data } }] });
    expect(answer({ optionId: "approve" })).toBe("approved");
    expect(answer({ optionId: "reject", text: "not now" })).toBe("rejected: not now");
    expect(answer({ optionId: "detailed" })).toBe("detailed");
    expect(answer({ text: "Paris" })).toBe("Paris");
    // Any other data part is still shown as it is.
    expect(messageText({ parts: [{ data: { city: "Paris" } }] })).toBe('{"city":"Paris"}');
  });

  it("shows the request a parked task waits on, with its options", () => {
    const detail = taskDetail("assistant", wireTask({ status: { state: "TASK_STATE_INPUT_REQUIRED", message: approval }, artifacts: [] }), []);
    expect(detail.waiting).toBe(true);
    expect(detail.reply).toBe("");
    // The request as the agent's data part states it, less its type; an approval takes no free text.
    const { type: _type, ...asked } = /** @type {any} */ (approval.parts[1]).data;
    expect(detail.request).toEqual({ ...asked, allowFreeform: false });
  });

  it("shows a working task's progress trackers, each with its kind, and none once it is no longer working", () => {
    const PROGRESS = "https://a2a-protocol.org/extensions/task-progress/v1";
    const at = "2026-12-02T05:00:01.000Z";
    const payload = {
      trackers: [
        { id: "mcp:call_1", status: "running", message: "calling devtools__count_down", progress: 2, total: 5, startedAt: at, updatedAt: at },
        { id: "subtask:s-1", status: "completed", message: "subtask 1 of 2: reading a page (done)", progress: 1, startedAt: at, updatedAt: at },
        { id: "round:1", status: "running", message: "round 1", startedAt: at, updatedAt: at },
        { status: "running", message: "no id: left out" },
      ],
      aggregate: { progress: 1, total: 2, message: "round 1" },
    };
    const message = { messageId: "p-1", role: "ROLE_AGENT", parts: [{ text: "calling devtools__count_down" }], metadata: { [PROGRESS]: payload } };
    const working = taskDetail("assistant", wireTask({ status: { state: "TASK_STATE_WORKING", timestamp: at, message }, artifacts: [] }), []);
    expect(working.progress).toEqual({
      trackers: [
        { id: "mcp:call_1", kind: "mcp", status: "running", message: "calling devtools__count_down", progress: 2, total: 5, startedAt: at, updatedAt: at },
        {
          id: "subtask:s-1",
          kind: "subtask",
          status: "completed",
          message: "subtask 1 of 2: reading a page (done)",
          progress: 1,
          startedAt: at,
          updatedAt: at,
        },
        { id: "round:1", kind: "round", status: "running", message: "round 1", startedAt: at, updatedAt: at },
      ],
      aggregate: { progress: 1, total: 2, message: "round 1" },
    });
    expect(working.statusText).toBe("calling devtools__count_down");
    // A finished task's status is its answer: no progress, even if the status were to carry some.
    expect(taskDetail("assistant", wireTask({ status: { state: "TASK_STATE_COMPLETED", timestamp: at, message } }), []).progress).toBeUndefined();
    expect(taskDetail("assistant", wireTask(), []).progress).toBeUndefined();
  });

  it("groups tasks by conversation, the latest change first", () => {
    const at = (id, contextId, timestamp, tenant = "assistant") => taskSummary(tenant, { id, contextId, status: { state: "TASK_STATE_WORKING", timestamp } });
    const grouped = conversationsOf([
      at("t1", "c1", "2026-12-02T05:00:01.000Z"),
      at("t2", "c2", "2026-12-02T05:00:02.000Z"),
      at("t3", "c1", "2026-12-02T05:00:03.000Z"),
      at("t4", "c1", "2026-12-02T05:00:04.000Z", "researcher"),
    ]);
    expect(grouped.map((c) => [c.tenant, c.contextId, c.tasks.map((t) => t.id)])).toEqual([
      ["researcher", "c1", ["t4"]],
      ["assistant", "c1", ["t3", "t1"]],
      ["assistant", "c2", ["t2"]],
    ]);
  });
});

describe("the console's HTTP side", () => {
  let stateDir;
  let gatekeeper;
  let devConsole;
  let events;
  /** What the scripted agent was asked, in order. @type {{ tenant: string, method: string, params: any }[]} */
  let calls;
  /** @type {Record<string, any> | undefined} */
  let current;

  beforeEach(async () => {
    stateDir = mkdtempSync(join(tmpdir(), "dev-console-test-"));
    gatekeeper = await startGatekeeper({ stateDir, port: 0 });
    events = createEventLog();
    calls = [];
    current = wireTask({ status: { state: "TASK_STATE_INPUT_REQUIRED", message: approval }, artifacts: [] });
    const session = {
      identity: { key: "dev-ada", name: "Ada" },
      agent: { origin: "http://127.0.0.1:1" },
      async call(tenant, method, params = {}) {
        calls.push({ tenant, method, params });
        if (method === "ListTasks") return { tasks: tenant === "assistant" ? [current] : [], totalSize: tenant === "assistant" ? 1 : 0, nextPageToken: "" };
        if (method === "GetTask") {
          if (current === undefined) throw new RpcFailed("GetTask", { code: -32001, message: `Task not found: ${JSON.stringify(params.id)}` });
          return current;
        }
        if (method === "SendMessage") return { task: { ...current, status: { state: "TASK_STATE_WORKING" } } };
        if (method === "CreateTaskPushNotificationConfig") return { ...params };
        throw new Error(`unexpected ${method}`);
      },
    };
    devConsole = serveConsole({ gatekeeper, session, tenants: [{ tenant: "assistant", name: "Assistant" }, { tenant: "researcher" }], events });
  });

  afterEach(async () => {
    devConsole.close();
    await gatekeeper.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  const post = (path, body, headers = {}) =>
    fetch(`${gatekeeper.origin}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: gatekeeper.origin, ...headers },
      body: JSON.stringify(body),
    });

  it("serves the page and its script on the gatekeeper's loopback origin, locked to itself", async () => {
    expect(devConsole.url).toBe(`${gatekeeper.origin}/console`);
    const page = await fetch(devConsole.url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script src="/console/page.js" defer></script>');
    expect((await fetch(`${devConsole.url}/page.js`)).headers.get("content-type")).toMatch(/^text\/javascript/);
    // The gatekeeper's own routes are untouched.
    expect((await fetch(gatekeeper.jwksUrl)).status).toBe(200);
  });

  it("lists the tenants and the caller's tasks by conversation, with the events' usage", async () => {
    for (const event of aTurn()) events.add(event);
    const overview = /** @type {any} */ (await (await fetch(`${devConsole.url}/api/overview`)).json());
    expect(overview.identity).toEqual({ key: "dev-ada", name: "Ada" });
    expect(overview.tenants).toEqual([
      { tenant: "assistant", name: "Assistant", total: 1, mcp: [] },
      { tenant: "researcher", total: 0, mcp: [] },
    ]);
    expect(overview.conversations).toHaveLength(1);
    expect(overview.conversations[0].tasks[0]).toMatchObject({ id: TASK, waiting: true, usage: { inputTokens: 320, outputTokens: 44 } });
    expect(overview.recent).toHaveLength(aTurn().length);
    expect(calls.filter((c) => c.method === "ListTasks").map((c) => c.tenant)).toEqual(["assistant", "researcher"]);
  });

  it("shows each tenant's MCP servers from the mcp.server events, and updates them live", async () => {
    const controller = new AbortController();
    const stream = await fetch(`${devConsole.url}/api/stream`, { signal: controller.signal });
    const reader = /** @type {ReadableStream<Uint8Array>} */ (stream.body).pipeThrough(new TextDecoderStream()).getReader();
    events.add({ ...workerEvent("mcp.server", { server: "devtools", status: "ready", tools: 2, durationMs: 35 }), taskId: undefined });
    let text = "";
    while (!text.includes("mcp.server")) text += (await reader.read()).value ?? "";
    expect(JSON.parse(/** @type {string} */ (/^data: (.*)$/m.exec(text)?.[1]))).toMatchObject({ event: "mcp.server", text: "devtools: ready, 2 tools, 35 ms" });
    controller.abort();
    const overview = /** @type {any} */ (await (await fetch(`${devConsole.url}/api/overview`)).json());
    expect(overview.tenants[0].mcp).toEqual([{ server: "devtools", status: "ready", tools: 2, at: expect.any(String) }]);
    expect(overview.tenants[1].mcp).toEqual([]);
  });

  it("answers a request as the caller: SendMessage on the task with a hitl/response part, returning at once", async () => {
    const response = await post("/console/api/answer", { tenant: "assistant", taskId: TASK, requestId: "r-1", optionId: "approve" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ state: "TASK_STATE_WORKING" });
    const sent = calls.find((c) => c.method === "SendMessage");
    expect(sent?.tenant).toBe("assistant");
    expect(sent?.params).toEqual({
      message: {
        messageId: expect.any(String),
        role: "ROLE_USER",
        taskId: TASK,
        contextId: CONTEXT,
        parts: [{ data: { type: HITL_RESPONSE_TYPE, requestId: "r-1", optionId: "approve" } }],
      },
      configuration: { returnImmediately: true },
    });
    expect(events.forTask(TASK).map((e) => e.event)).toEqual(["console.answered"]);

    // A request no longer open is not answered again.
    current = wireTask();
    expect((await post("/console/api/answer", { tenant: "assistant", taskId: TASK, requestId: "r-1", text: "late" })).status).toBe(409);
    expect(calls.filter((c) => c.method === "SendMessage")).toHaveLength(1);
  });

  it("answers a task that is gone (its conversation or its caller erased) with 404 and gone", async () => {
    current = undefined;
    const response = await fetch(`${devConsole.url}/api/task?tenant=assistant&id=${TASK}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ gone: true, error: expect.stringContaining("Task not found") });
  });

  it("re-delivers dead letters by a push config back to this gatekeeper, with a notification token it issued for the task", async () => {
    current = wireTask({ metadata: { [DEAD_LETTERS_KEY]: [{ configId: "gk-1", seq: 5, status: 404, at: "2026-12-02T05:00:03.000Z" }] } });
    const response = await post("/console/api/redeliver", { tenant: "assistant", taskId: TASK });
    expect(response.status).toBe(200);
    const { configId } = /** @type {any} */ (await response.json());
    const created = calls.find((c) => c.method === "CreateTaskPushNotificationConfig");
    expect(created?.params).toEqual({ taskId: TASK, id: configId, url: gatekeeper.pushUrl, token: expect.any(String) });
    // The token is one the gatekeeper takes pushes with, for that task only.
    expect(gatekeeper.bindNotificationToken(created?.params.token, TASK)).toBe(true);
    expect(gatekeeper.bindNotificationToken(created?.params.token, "another-task")).toBe(false);

    current = wireTask();
    expect((await post("/console/api/redeliver", { tenant: "assistant", taskId: TASK })).status).toBe(409);
  });

  it("refuses what another site could send: another Host, another Origin, a form post, an unknown tenant", async () => {
    const answer = { tenant: "assistant", taskId: TASK, requestId: "r-1", optionId: "approve" };
    expect((await post("/console/api/answer", answer, { Origin: "https://evil.example" })).status).toBe(403);
    expect((await post("/console/api/answer", answer, { Origin: "" })).status).toBe(403);
    expect((await post("/console/api/answer", answer, { "Content-Type": "text/plain" })).status).toBe(415);
    expect((await post("/console/api/answer", { ...answer, tenant: "nobody" })).status).toBe(400);
    expect((await post("/console/api/answer", { ...answer, optionId: undefined })).status).toBe(400);
    expect(calls.filter((c) => c.method === "SendMessage")).toEqual([]);
    // DNS rebinding: a name that resolves here but is not this origin.
    const { request } = await import("node:http");
    const status = await new Promise((resolve, reject) => {
      const req = request(`${devConsole.url}/api/overview`, { headers: { Host: "attacker.example:80" } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(421);
  });

  it("streams each new event to the page as it arrives", async () => {
    const controller = new AbortController();
    const response = await fetch(`${devConsole.url}/api/stream`, { signal: controller.signal });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).pipeThrough(new TextDecoderStream()).getReader();
    events.add(workerEvent("turn.started", { instanceId: "turn-9" }));
    let text = "";
    while (!text.includes("turn-9")) text += (await reader.read()).value ?? "";
    const data = JSON.parse(/** @type {string} */ (/^data: (.*)$/m.exec(text)?.[1]));
    expect(data).toMatchObject({ event: "turn.started", source: "worker", text: "instance turn-9", taskId: TASK });
    controller.abort();
  });
});

describe("a task's waterfall", () => {
  const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  /** Milliseconds past a fixed start, as an event's `at`. */
  const t = (ms) => new Date(Date.UTC(2026, 11, 2, 5, 0, 0) + ms).toISOString();
  const ev = (ms, event, data, scope = {}) => ({ ...workerEvent(event, data, { at: t(ms), ...scope }), traceId: TRACE });
  const model = (ms, durationMs, extra = {}) =>
    ev(ms, "model.call", {
      round: 1,
      model: "primary-model",
      fallback: false,
      retries: 0,
      outcome: "ok",
      steps: 1,
      inputTokens: 10,
      outputTokens: 2,
      durationMs,
      ...extra,
    });
  const turn = () => [
    ev(0, "task.accepted", { messageId: "m-1", stream: true, pushConfigs: 1 }),
    ev(5, "turn.started", { instanceId: "turn-1" }),
    model(105, 100),
    ev(106, "tool.started", { round: 1, tool: "current_time", callId: "c-1" }),
    ev(116, "tool.call", { round: 1, tool: "current_time", callId: "c-1", outcome: "ok", durationMs: 10, redacted: false }),
    ev(117, "tool.started", { round: 1, tool: "devtools__roll_dice", callId: "c-2" }),
    ev(140, "tool.call", { round: 1, tool: "devtools__roll_dice", callId: "c-2", outcome: "error", durationMs: 23, redacted: false }),
    ev(150, "hitl.asked", { requestId: "r-1", requestKind: "approval", expiresAt: t(86_400_000) }),
    ev(400, "hitl.answered", { requestId: "r-1", outcome: "answered", optionId: "approve" }),
    ev(410, "subtask.started", { round: 1, subtaskId: "s-1", type: "read_page" }),
    model(460, 40, { subtaskId: "s-1" }),
    ev(470, "subtask.finished", { round: 1, subtaskId: "s-1", type: "read_page", outcome: "done", durationMs: 60 }),
    model(600, 120),
    ev(610, "turn.finished", { state: "TASK_STATE_COMPLETED", durationMs: 610, modelCalls: 3, inputTokens: 30, outputTokens: 6 }),
    ev(640, "push.attempt", { configId: "gk-1", seq: 9, attempt: 1, status: 503, outcome: "transient", durationMs: 20 }),
    ev(700, "push.attempt", { configId: "gk-1", seq: 9, attempt: 2, status: 200, outcome: "delivered", durationMs: 15 }),
  ];

  it("draws each part of a turn as a bar from its start to its end, in the order they began, failures marked", () => {
    const w = waterfallOf(turn(), { now: Date.parse(t(10_000)) });
    expect(w).toMatchObject({ traceId: TRACE, startedAt: t(0), spanMs: 700 });
    const bars = w.bars.map(({ kind, label, startMs, endMs, failed, running, nested }) => ({ kind, label, startMs, endMs, failed, running, nested }));
    const bar = (kind, label, startMs, endMs, more = {}) => ({ kind, label, startMs, endMs, failed: false, running: false, nested: false, ...more });
    expect(bars).toEqual([
      bar("turn", "turn turn-1", 0, 610),
      bar("model", "model primary-model", 5, 105),
      bar("tool", "current_time", 106, 116),
      bar("mcp", "devtools__roll_dice", 117, 140, { failed: true }),
      // An answered approval reads as its answer.
      bar("question", "approval: approved", 150, 400),
      bar("subtask", "subtask read_page", 410, 470),
      bar("model", "model primary-model", 420, 460, { nested: true }),
      bar("model", "model primary-model", 480, 600),
      bar("push", "push gk-1", 620, 640, { failed: true }),
      bar("push", "push gk-1", 685, 700),
    ]);
  });

  it("keeps a bar open while its part runs: a tool call begun and not ended runs until now", () => {
    const running = turn().slice(0, 4);
    const w = waterfallOf(running, { now: Date.parse(t(300)) });
    expect(w.bars.find((b) => b.kind === "tool")).toMatchObject({ label: "current_time", startMs: 106, endMs: 300, running: true, failed: false });
    expect(w.bars.find((b) => b.kind === "turn")).toMatchObject({ startMs: 0, endMs: 300, running: true });
  });

  it("names the task's trace from its metadata, and is in the task's detail", () => {
    const detail = taskDetail("assistant", wireTask({ metadata: { "https://dynamicagents.dev/trace": "0af7651916cd43dd8448eb211c80319c" } }), turn());
    expect(detail.waterfall.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(detail.waterfall.bars).toHaveLength(10);
    expect(waterfallOf([]).bars).toEqual([]);
  });
});
