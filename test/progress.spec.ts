import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { AgentDB } from "@dynamicagents/core/db";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import { progressOutlet } from "../src/round/progress/outlet.js";
import { ProgressPushes } from "../src/round/progress/pushes.js";
import { COUNTING_SECRET, mark } from "./support/agents.js";
import { captureConsole } from "./support/console-capture.js";
import { GATEKEEPER } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { call, drain, openStream, userMessage } from "./support/rpc.js";
import { drainRest, openRestStream, restCall } from "./support/rest.js";
import { useMarkerHarness } from "./support/turn-harness.js";

// Work a client can watch (docs/protocol.md "Progress"): the draft A2A Task
// Progress extension, activated by `A2A-Extensions`, its trackers in working
// statusUpdate events' metadata and the task's status message.

const URI = "https://a2a-protocol.org/extensions/task-progress/v1";
const ACTIVATE = { "A2A-Extensions": URI };

const harness = useMarkerHarness();
const edge = markerEdge();
const newCaller = (tenant = "marker") => ({ tenant, identity: { key: `caller-${crypto.randomUUID()}` } });
type Caller = ReturnType<typeof newCaller>;
const rpc = (method: string, params: Record<string, unknown>, mint: Caller, headers?: Record<string, string>) =>
  call(method, params, { worker: edge.fetch, mint, ...(headers ? { headers } : {}) });
const stream = (method: string, params: Record<string, unknown>, mint: Caller, headers?: Record<string, string>) =>
  openStream(method, params, { worker: edge.fetch, mint, ...(headers ? { headers } : {}) });

const toolMessages = (c: ModelCall) => c.messages.filter((m) => m.role === "tool");
/** The model calls `name` once, then answers. */
function callsOnce(name: string, args: Record<string, unknown>) {
  harness.outbound.model = (c) => (toolMessages(c).length === 0 ? chatToolCall(name, args, c.model) : chatCompletion("all done", c.model));
}

type Event = { id: string | undefined; result: any };
const payloadOf = (event: Event) => event.result.statusUpdate?.metadata?.[URI];
const progressEvents = (events: Event[]) => events.filter((e) => payloadOf(e) !== undefined);
const trackersOf = (events: Event[], prefix: string) =>
  progressEvents(events).flatMap((e) => payloadOf(e).trackers.filter((t: { id: string }) => t.id.startsWith(prefix)));
const stateOf = (event: Event) => event.result.task?.status?.state ?? event.result.statusUpdate?.status?.state;

describe("progress, activated by A2A-Extensions", () => {
  it("a tool turn's stream carries the call's tracker running, then once completed, between working and the answer; the response echoes the header", async () => {
    callsOnce("make_data", { n: 3 });
    const opened = await stream("SendStreamingMessage", { message: userMessage("make data") }, newCaller(), ACTIVATE);
    expect(opened.headers.get("A2A-Extensions")).toBe(URI);
    const events = await drain(opened);
    const states = events.map(stateOf);
    const working = states.indexOf("TASK_STATE_WORKING");
    const done = states.indexOf("TASK_STATE_COMPLETED");
    const progress = events.map((e, i) => (payloadOf(e) ? i : -1)).filter((i) => i >= 0);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((i) => i > working && i < done)).toBe(true);
    // Each is a working statusUpdate, its payload in the event's metadata and its status message's, with a text saying what happens.
    for (const i of progress) {
      const update = events[i]!.result.statusUpdate;
      expect(update.status.state).toBe("TASK_STATE_WORKING");
      expect(update.status.message.metadata[URI]).toEqual(update.metadata[URI]);
      const texts = update.metadata[URI].trackers.map((t: { message: string }) => t.message);
      expect(texts).toContain(update.status.message.parts[0].text);
    }
    const calls = trackersOf(events, "tool:");
    expect(new Set(calls.map((t: { id: string }) => t.id)).size).toBe(1);
    expect(calls.map((t: { status: string }) => t.status)).toEqual(["running", "completed"]);
    expect(Object.keys(calls[1]).sort()).toEqual(["id", "message", "startedAt", "status", "updatedAt"]);
    expect(JSON.parse(calls[1].message.slice(mark("tool").length))).toEqual({ tool: "make_data", status: "completed" });
  });

  it("each of several quick calls shows running, then once completed, however close together they come", async () => {
    harness.outbound.model = (c) => {
      const calls = toolMessages(c).length;
      return calls < 3 ? chatToolCall("make_data", { n: calls }, c.model) : chatCompletion("three made", c.model);
    };
    const events = await drain(await stream("SendStreamingMessage", { message: userMessage("make three") }, newCaller(), ACTIVATE));
    const calls = trackersOf(events, "tool:");
    const ids = [...new Set(calls.map((t: { id: string }) => t.id))];
    expect(ids).toHaveLength(3);
    for (const id of ids) {
      const seen = calls.filter((t: { id: string }) => t.id === id).map((t: { status: string }) => t.status);
      expect(seen[0]).toBe("running");
      expect(seen.filter((s: string) => s === "completed")).toHaveLength(1);
      expect(seen.at(-1)).toBe("completed");
    }
  });

  it("without activation the same stream carries no progress, and SubscribeToTask with Last-Event-ID replays it only when activated", async () => {
    callsOnce("make_data", { n: 4 });
    const caller = newCaller();
    const opened = await stream("SendStreamingMessage", { message: userMessage("make data") }, caller);
    expect(opened.headers.get("A2A-Extensions")).toBeNull();
    const plain = await drain(opened);
    expect(progressEvents(plain)).toEqual([]);
    const taskId = plain[0]!.result.task.id;
    // Its ids skip the progress events' seq: they exist, for a client that asks.
    const ids = plain.slice(1).map((e) => Number(e.id));
    const replayed = await drain(await stream("SubscribeToTask", { id: taskId }, caller, { "Last-Event-ID": "0", ...ACTIVATE }));
    const withProgress = replayed.slice(1).map((e) => Number(e.id));
    expect(withProgress.length).toBeGreaterThan(ids.length + 1);
    expect(withProgress).toEqual([...withProgress].sort((a, b) => a - b));
    expect(trackersOf(replayed, "tool:").map((t: { status: string }) => t.status)).toEqual(["running", "completed"]);
    const again = await drain(await stream("SubscribeToTask", { id: taskId }, caller, { "Last-Event-ID": "0" }));
    expect(progressEvents(again)).toEqual([]);
    // Never in the history: the user's message and the answer.
    const task = (await rpc("GetTask", { id: taskId }, caller)).body.result;
    expect(task.history.map((m: { role: string }) => m.role)).toEqual(["ROLE_USER", "ROLE_AGENT"]);
    expect(JSON.stringify(task.history)).not.toContain(URI);
  });

  it("every reader sees the latest progress in status.message while the task works", async () => {
    callsOnce("count_up", { to: 15, everyMs: 100 });
    const caller = newCaller();
    const task = (await rpc("SendMessage", { message: userMessage("hold on"), configuration: { returnImmediately: true } }, caller)).body.result.task;
    const running = await eventually(
      async () => (await rpc("GetTask", { id: task.id }, caller)).body.result,
      (t) => t.status.message?.metadata?.[URI]?.trackers.some((tracker: { id: string }) => tracker.id.startsWith("tool:")),
      "the tool's tracker in the task's status",
    );
    expect(running.status.state).toBe("TASK_STATE_WORKING");
    const kinds = running.status.message.metadata[URI].trackers.map((t: { id: string; status: string }) => `${t.id.split(":")[0]} ${t.status}`);
    expect(kinds.sort()).toEqual(["round running", "tool running"]);
    const listed = (await rpc("ListTasks", {}, caller)).body.result.tasks[0];
    expect(listed.status.message.metadata[URI]).toEqual(running.status.message.metadata[URI]);
    const snapshot = await stream("SubscribeToTask", { id: task.id }, caller);
    const first = (await snapshot.events[Symbol.asyncIterator]().next()).value;
    expect(first.reply.result.task.status.message.metadata[URI]).toEqual(running.status.message.metadata[URI]);
    await snapshot.close();
    await eventually(
      async () => (await rpc("GetTask", { id: task.id }, caller)).body.result.status.state,
      (state) => state === "TASK_STATE_COMPLETED",
      "the answer",
    );
  });

  it("a slow tool's progress() calls are coalesced to two a second, its final state kept; a redactor-marked secret in its argument never shows", async () => {
    callsOnce("count_up", { to: 30, everyMs: 40, secret: COUNTING_SECRET });
    const events = await drain(await stream("SendStreamingMessage", { message: userMessage("count") }, newCaller(), ACTIVATE));
    const snapshots = progressEvents(events);
    expect(JSON.stringify(events)).not.toContain(COUNTING_SECRET);
    const counting = trackersOf(events, "tool:");
    // 30 calls over about 1.2 s: a handful of snapshots, at least half a second apart.
    expect(counting.length).toBeLessThan(8);
    // Each change of the tracker in a snapshot of its own, at least half a second after the one before.
    const changes: number[] = [];
    let before = "";
    for (const snapshot of snapshots) {
      const tracker = payloadOf(snapshot).trackers.find((t: { id: string }) => t.id.startsWith("tool:"));
      const state = JSON.stringify(tracker ?? null);
      if (tracker && state !== before) changes.push(Date.parse(snapshot.result.statusUpdate.status.timestamp));
      before = state;
    }
    expect(changes.length).toBeGreaterThan(1);
    for (let i = 1; i < changes.length; i++) expect(changes[i]! - changes[i - 1]!).toBeGreaterThanOrEqual(490);
    const progress = counting.map((t: { progress?: number }) => t.progress ?? 0);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const last = counting.at(-1);
    expect(last).toMatchObject({ status: "completed", progress: 30, total: 30 });
    expect(counting.filter((t: { status: string }) => t.status === "completed")).toHaveLength(1);
    // Its plugin shows its arguments and result, redacted.
    const said = JSON.parse(last.message.slice(mark("tool").length));
    expect(said.arguments).toContain(mark("redacted"));
    expect(said.result).toContain('"counted":30');
  });
});

describe("progress as pushes", () => {
  const sendWithPush = (text: string, url: string) => ({
    message: userMessage(text),
    configuration: { returnImmediately: true, taskPushNotificationConfig: { url, token: "notify-secret" } },
  });
  const terminal = (taskId: string) => harness.outbound.pushes.find((p) => p.body.task?.id === taskId);
  const finished = (taskId: string) =>
    eventually(
      () => terminal(taskId),
      (push) => push !== undefined,
      "the terminal push",
    );

  it("go to a config whose request activated progress, before the terminal push; never to one whose request did not", async () => {
    callsOnce("count_up", { to: 6, everyMs: 150 });
    const on = `${GATEKEEPER}/progress-on`;
    const off = `${GATEKEEPER}/progress-off`;
    const withIt = (await rpc("SendMessage", sendWithPush("count with pushes", on), newCaller(), ACTIVATE)).body.result.task;
    await finished(withIt.id);
    const without = (await rpc("SendMessage", sendWithPush("count without", off), newCaller())).body.result.task;
    await finished(without.id);

    const to = (url: string) => harness.outbound.pushes.filter((p) => p.url === url);
    const progress = to(on).filter((p) => p.body.statusUpdate?.metadata?.[URI]);
    expect(progress.length).toBeGreaterThan(0);
    const seqs = to(on).map((p) => Number(p.headers.get("x-dynamicagents-event-seq")));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(to(on).at(-1)!.body.task?.status.state).toBe("TASK_STATE_COMPLETED");
    for (const push of progress) expect(push.body.statusUpdate.status.message.metadata[URI]).toEqual(push.body.statusUpdate.metadata[URI]);
    expect(to(off).filter((p) => p.body.statusUpdate?.metadata?.[URI])).toEqual([]);
    expect(to(off).at(-1)!.body.task?.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("never reach a config ahead of an earlier push still pending there: a resumed round's progress skips it", async () => {
    // Asks first; once answered, counts (its progress), then answers.
    harness.outbound.model = (c) => {
      const tools = toolMessages(c).length;
      if (tools === 0) return chatToolCall("ask_user", { question: "which?" }, c.model);
      if (tools === 1) return chatToolCall("count_up", { to: 4, everyMs: 150 }, c.model);
      return chatCompletion("all done", c.model);
    };
    const url = `${GATEKEEPER}/progress-held`;
    const arrivals: Array<{ seq: number; state: string; progress: boolean }> = [];
    let answered = false;
    harness.outbound.pushReplies.set(url, async (request) => {
      const body = (await request.json()) as {
        task?: { status: { state: string } };
        statusUpdate?: { status: { state: string }; metadata?: Record<string, unknown> };
      };
      const state = body.task?.status.state ?? body.statusUpdate?.status.state ?? "";
      arrivals.push({ seq: Number(request.headers.get("x-dynamicagents-event-seq")), state, progress: body.statusUpdate?.metadata?.[URI] !== undefined });
      // The request's push fails while the human answers, and stays pending through the resumed round.
      return new Response(null, { status: state === "TASK_STATE_INPUT_REQUIRED" && !answered ? 503 : 200 });
    });
    const caller = newCaller();
    const task = (await rpc("SendMessage", sendWithPush("ask me", url), caller, ACTIVATE)).body.result.task;
    await eventually(
      () => arrivals.filter((a) => a.state === "TASK_STATE_INPUT_REQUIRED"),
      (asks) => asks.length > 0,
      "the request's push",
    );
    const reply = await rpc("SendMessage", { message: { ...userMessage("the first"), taskId: task.id }, configuration: { returnImmediately: true } }, caller);
    expect(reply.body.error).toBeUndefined();
    answered = true;
    await eventually(
      () => arrivals.at(-1),
      (last) => last?.state === "TASK_STATE_COMPLETED",
      "the terminal push",
    );
    // In the order they arrived, no event ever follows a later one at this config.
    const seqs = arrivals.map((a) => a.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(arrivals.filter((a) => a.progress)).toEqual([]);
  });

  it("are best effort: one attempt each, no retry, no dead letter", async () => {
    callsOnce("count_up", { to: 6, everyMs: 150 });
    const url = `${GATEKEEPER}/progress-down`;
    const tried: number[] = [];
    harness.outbound.pushReplies.set(url, async (request) => {
      const body = (await request.json()) as { statusUpdate?: { metadata?: Record<string, unknown> } };
      if (!body.statusUpdate?.metadata?.[URI]) return new Response(null, { status: 200 });
      tried.push(Number(request.headers.get("x-dynamicagents-event-seq")));
      return new Response("down", { status: 503 });
    });
    const caller = newCaller();
    const task = (await rpc("SendMessage", sendWithPush("count, unheard", url), caller, ACTIVATE)).body.result.task;
    const done = await eventually(
      async () => (await rpc("GetTask", { id: task.id }, caller)).body.result,
      (t) => t.status.state === "TASK_STATE_COMPLETED",
      "the answer",
    );
    expect(tried.length).toBeGreaterThan(0);
    expect(new Set(tried).size).toBe(tried.length);
    expect(done.metadata?.["https://dynamicagents.dev/deadLetters"]).toBeUndefined();
  });
});

describe("progress of a delegating turn", () => {
  it("each subtask is a tracker (its chunks its progress), each round past the first too, and the round's subtasks are its aggregate", async () => {
    harness.outbound.model = (c) =>
      c.tools.includes("delegate")
        ? chatToolCall("delegate", { subtasks: ["a", "b"].map((say) => ({ type: "echo_task", params: { say } })) }, c.model)
        : chatCompletion("the answer", c.model);
    const events = await drain(await stream("SendStreamingMessage", { message: userMessage("look it up") }, newCaller("marker-researcher"), ACTIVATE));
    expect(stateOf(events.at(-1)!)).toBe("TASK_STATE_COMPLETED");
    const subtasks = trackersOf(events, "subtask:");
    const ids = [...new Set(subtasks.map((t: { id: string }) => t.id))];
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      const seen = subtasks.filter((t: { id: string }) => t.id === id);
      expect(seen.filter((t: { status: string }) => t.status === "completed")).toHaveLength(1);
      const last = seen.at(-1);
      expect(last).toMatchObject({ status: "completed", progress: 1 });
      expect(last.total).toBeUndefined();
      const said = JSON.parse(last.message.slice(mark("subtask").length));
      expect(said).toMatchObject({ type: "echo_task", of: 2, status: "completed", chunks: 1 });
    }
    const rounds = trackersOf(events, "round:");
    expect([...new Set(rounds.map((t: { id: string }) => t.id))]).toEqual(["round:1", "round:2"]);
    expect(rounds.filter((t: { status: string }) => t.status === "completed").map((t: { id: string }) => t.id)).toEqual(["round:1", "round:2"]);
    const aggregates = progressEvents(events).flatMap((e) => (payloadOf(e).aggregate ? [payloadOf(e).aggregate] : []));
    expect(aggregates.at(-1)).toMatchObject({ progress: 2, total: 2 });
  });
});

describe("progress of an MCP server's tool", () => {
  it("the server's progress notifications are its call's tracker's progress", async () => {
    callsOnce("docs__steps", { n: 12 });
    const events = await drain(await stream("SendStreamingMessage", { message: userMessage("take steps") }, newCaller("mcp"), ACTIVATE));
    expect(stateOf(events.at(-1)!)).toBe("TASK_STATE_COMPLETED");
    const calls = trackersOf(events, "mcp:");
    expect(new Set(calls.map((t: { id: string }) => t.id)).size).toBe(1);
    expect(calls.some((t: { status: string; progress?: number }) => t.status === "running" && (t.progress ?? 0) > 0)).toBe(true);
    expect(calls.at(-1)).toMatchObject({ status: "completed", progress: 12, total: 12 });
    const notes = calls.map((t: { message: string }) => JSON.parse(t.message.slice(mark("tool").length)).note).filter(Boolean);
    expect(notes[0]).toMatch(/^step \d+ of 12$/);
    expect(trackersOf(events, "tool:")).toEqual([]);
  });
});

describe("a turn without trackers", () => {
  /** The SQL statements run on one Durable Object's storage while watched (the test pool runs the objects in the specs' isolate). */
  const sql = { watched: undefined as SqlStorage | undefined, statements: [] as string[] };

  async function turnOnce(headers?: Record<string, string>) {
    const caller = newCaller();
    const namespace = env.MARKER_AGENT!;
    const stub = namespace.get(namespace.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "marker", key: caller.identity.key })));
    // Started (its migrations run) before it is watched.
    await runInDurableObject(stub, (_instance, state) => {
      sql.watched = state.storage.sql;
    });
    sql.statements = [];
    const console = captureConsole();
    try {
      const events = await drain(await stream("SendStreamingMessage", { message: userMessage("hello") }, caller, headers));
      const taskId = events[0]!.result.task.id as string;
      await eventually(
        () => runInDurableObject(stub, (_instance, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).turns.get(taskId)),
        (open) => open === undefined,
        "the turn's record closed",
      );
      return {
        statements: [...sql.statements].sort(),
        lines: console
          .events()
          .map((e) => e.event)
          .sort(),
        events,
      };
    } finally {
      sql.watched = undefined;
      console[Symbol.dispose]();
    }
  }

  it("writes the same SQL statements and log lines with the extension activated as without, and no progress", async () => {
    const any = env.MARKER_AGENT!.get(env.MARKER_AGENT!.idFromName(crypto.randomUUID()));
    const proto = await runInDurableObject(any, (_instance, state) => Object.getPrototypeOf(state.storage.sql) as SqlStorage);
    const exec = proto.exec;
    proto.exec = function (this: SqlStorage, query: string, ...bindings: unknown[]) {
      if (this === sql.watched) sql.statements.push(query);
      return exec.call(this, query, ...bindings);
    } as typeof exec;
    try {
      const plain = await turnOnce();
      const activated = await turnOnce(ACTIVATE);
      expect(progressEvents(activated.events)).toEqual([]);
      expect(plain.statements.length).toBeGreaterThan(0);
      expect(activated.statements).toEqual(plain.statements);
      expect(activated.lines).toEqual(plain.lines);
    } finally {
      proto.exec = exec;
    }
  });
});

describe("bounded", () => {
  it("past 256 progress events a task gets no more, and its status message alone keeps the latest", async () => {
    const stub = env.MARKER_AGENT!.get(env.MARKER_AGENT!.idFromName(crypto.randomUUID()));
    const seen = await runInDurableObject(stub, (_instance, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      const task = { id: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING", timestamp: new Date().toISOString() } };
      db.tasks.insert({ id: "t1", contextId: "c1", messageId: "m1", state: "TASK_STATE_WORKING", statusAt: Date.now(), json: JSON.stringify(task) });
      let stopped = 0;
      const pushes = new ProgressPushes({ taskId: "t1", origin: "https://agents.test", env: {}, events: { emit: () => {}, emitPlugin: () => {} } });
      const sink = progressOutlet({ db, taskId: "t1", pushes, stopped: () => stopped++ });
      const tracker = { id: "tool:x", status: "running" as const, startedAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z" };
      for (let n = 1; n <= 300; n++) sink({ text: `step ${n}`, payload: { trackers: [{ ...tracker, progress: n }] } });
      const status = JSON.parse(db.tasks.get("t1")!.taskJson).status;
      return { events: db.events.count("t1", "progress"), status, stopped };
    });
    expect(seen.events).toBe(256);
    expect(seen.status.message.parts[0].text).toBe("step 300");
    expect(seen.status.message.metadata[URI].trackers[0].progress).toBe(300);
    expect(seen.stopped).toBe(0);
  });
});

describe("over HTTP+JSON", () => {
  it("activates and echoes the same: message:stream carries the trackers, a refusal echoes the header too", async () => {
    callsOnce("make_data", { n: 5 });
    const caller = newCaller();
    const opened = await openRestStream("SendStreamingMessage", { message: userMessage("make data") }, { worker: edge.fetch, mint: caller, headers: ACTIVATE });
    expect(opened.headers.get("A2A-Extensions")).toBe(URI);
    const events = (await drainRest(opened)).map(({ id, event }) => ({ id, result: event }));
    expect(trackersOf(events, "tool:").map((t: { status: string }) => t.status)).toEqual(["running", "completed"]);
    const missing = await restCall("GetTask", { id: "no-such-task" }, { worker: edge.fetch, mint: caller, headers: ACTIVATE });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("A2A-Extensions")).toBe(URI);
  });
});

describe("the A2A-Extensions header", () => {
  it("is echoed on any answer of a request that activated progress, a refusal too; an unknown extension is ignored", async () => {
    const caller = newCaller();
    const refused = await rpc("GetTask", { id: "no-such-task" }, caller, { "A2A-Extensions": `https://example.com/ext/other, ${URI}` });
    expect(refused.body.error.code).toBe(-32001);
    expect(refused.headers.get("A2A-Extensions")).toBe(URI);
    const other = await rpc("GetTask", { id: "no-such-task" }, caller, { "A2A-Extensions": "https://example.com/ext/other" });
    expect(other.headers.get("A2A-Extensions")).toBeNull();
    expect(other.body.error.code).toBe(-32001);
  });
});

describe("the progress words", () => {
  it("are optional, but whole when given: a policy with some of them is refused, naming the missing ones", async () => {
    const { validatePolicy } = await import("@dynamicagents/core/agent");
    const { researchPolicy } = await import("../reference/policy.js");
    const { progress, ...without } = researchPolicy;
    expect(() => validatePolicy(without, { delegates: true })).not.toThrow();
    expect(() => validatePolicy({ ...researchPolicy, progress: { ...progress!, round: undefined as never } }, { delegates: true })).toThrow(
      /agentPolicy\(\) is missing progress\.round/,
    );
  });
});
