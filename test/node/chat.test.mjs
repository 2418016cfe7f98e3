// The chat of `npm start` prints what agents send: control characters in it are
// shown escaped, so a reply cannot drive the developer's terminal. It shows the
// answer as it streams, then the reply of record (the verified push); it keeps
// a conversation per tenant, and answers what a turn asks (human in the loop).
import { EventEmitter } from "node:events";
import { createServer } from "node:http";
import { PassThrough, Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE, HITL_TIMEOUT_TYPE } from "../../src/a2a/wire.ts";
import { ARRIVED, NEEDS_INPUT_EXIT, parseAnswer, runChat, runOnce, trackerLine } from "../../scripts/dev/chat.mjs";
import { closeServer, listen, readBody, sendJson } from "../../scripts/dev/http.mjs";
import { MESSAGE_REPLY, createSession, hitlRequestOf } from "../../scripts/dev/session.mjs";
import { printable } from "../../scripts/dev/terminal.mjs";

const PROGRESS = "https://a2a-protocol.org/extensions/task-progress/v1";
/** The trace id of the fakes' turns (what the dev gatekeeper started for each). */
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLEAR_SCREEN = "\x1b[2J\x1b[H";
const RETITLE = "\x1b]0;you have been owned\x07";
const CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x1b\\";
const C1_CSI = "\u009b31m";
/** Every control character a terminal may act on, except newline and tab. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("printable", () => {
  it("escapes an ANSI escape sequence and an OSC title sequence", () => {
    expect(printable(`a${CLEAR_SCREEN}b`)).toBe("a\\u001b[2J\\u001b[Hb");
    expect(printable(`x${RETITLE}y`)).toBe("x\\u001b]0;you have been owned\\u0007y");
  });

  it("escapes every C0 control, DEL and C1 control, and keeps newline, tab and other text", () => {
    expect(printable("cr\rover\u007fdel\u0000nul")).toBe("cr\\u000dover\\u007fdel\\u0000nul");
    expect(printable(C1_CSI)).toBe("\\u009b31m");
    expect(printable(CLIPBOARD)).not.toMatch(RAW_CONTROL);
    expect(printable("line 1\n\tline 2 — ✓ é 日本")).toBe("line 1\n\tline 2 — ✓ é 日本");
    let all = "";
    for (let c = 0; c < 0xa0; c++) all += String.fromCharCode(c);
    expect(printable(all)).not.toMatch(RAW_CONTROL);
  });
});

const EVIL = `${CLEAR_SCREEN}${RETITLE}${CLIPBOARD}${C1_CSI}\r`;

/** A session whose agent puts terminal controls in everything it sends back. */
function hostileSession({ endState = "TASK_STATE_COMPLETED", sendFails = false } = {}) {
  const gatekeeperEvents = new EventEmitter();
  const others = [];
  return {
    gatekeeperEvents,
    others,
    onOtherPush: (listener) => others.push(listener),
    async send(tenant) {
      if (sendFails) throw new Error(`SendMessage failed: ${EVIL} (JSON-RPC -32603)`);
      const end = { state: endState, text: `reply ${EVIL} end`, task: {} };
      return {
        tenant,
        taskId: `${EVIL}task`,
        contextId: `${EVIL}ctx`,
        messageId: "m1",
        traceId: TRACE_ID,
        done: Promise.resolve(end),
        nextStop: async () => /** @type {const} */ ({ kind: "end", end }),
        // Status pushes land while the turn runs, and the answer streams.
        onStatus: (listener) => listener(`status ${EVIL}`, "TASK_STATE_WORKING"),
        onChunk: (listener) => listener({ text: `chunk ${EVIL}`, append: false, lastChunk: true }),
        onTracker: (listener) => listener({ id: `tool:${EVIL}`, kind: "tool", status: "running", message: `calling ${EVIL}`, change: "started" }),
      };
    },
    async listTasks() {
      return {
        totalSize: 1,
        tasks: [
          { id: `${EVIL}id`, status: { state: `TASK_STATE_${EVIL}`, timestamp: EVIL }, history: [{ role: "ROLE_USER", parts: [{ text: `asked ${EVIL}` }] }] },
        ],
      };
    },
    async cancel() {
      throw new Error(`CancelTask failed: ${EVIL}`);
    },
    async forgetContext() {
      throw new Error(`DeleteContext failed: ${EVIL}`);
    },
    async forgetMe() {
      throw new Error(`DeleteCallerData failed: ${EVIL}`);
    },
    async getTask() {
      return { status: { state: EVIL } };
    },
    async answer() {
      return {};
    },
  };
}

function sink() {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk) => (text += chunk));
  return { stream, text: () => text };
}

describe("runOnce", () => {
  it("prints the reply, the task id and the progress with their controls escaped", async () => {
    const stdout = sink();
    const stderr = sink();
    const code = await runOnce({ session: hostileSession(), tenant: "assistant", text: "hi", timeoutMs: 5_000, stdout: stdout.stream, stderr: stderr.stream });
    expect(code).toBe(0);
    expect(stdout.text()).toContain("reply \\u001b[2J");
    expect(stderr.text()).toContain("status \\u001b[2J");
    expect(stderr.text()).toContain("→ calling \\u001b[2J");
    expect(stderr.text()).toContain("assistant ▹ chunk \\u001b[2J");
    expect(stdout.text()).not.toMatch(RAW_CONTROL);
    expect(stderr.text()).not.toMatch(RAW_CONTROL);
  });

  it("escapes the text of a failed task and of a refused turn", async () => {
    for (const session of [hostileSession({ endState: "TASK_STATE_FAILED" }), hostileSession({ sendFails: true })]) {
      const stdout = sink();
      const stderr = sink();
      const code = await runOnce({ session, tenant: "assistant", text: "hi", timeoutMs: 5_000, stdout: stdout.stream, stderr: stderr.stream });
      expect(code).toBe(1);
      expect(stderr.text()).toContain("\\u001b]0;you have been owned\\u0007");
      expect(stderr.text()).not.toMatch(RAW_CONTROL);
      expect(stdout.text()).toBe("");
    }
  });
});

describe("runChat (piped)", () => {
  it("escapes replies, progress, task lists, errors, refusals and other pushes", async () => {
    const session = hostileSession();
    const output = sink();
    const input = Readable.from(["hello\n/tasks\n/cancel\n/forget-me\n"]);
    const chat = runChat({ session, tenant: "assistant", tenants: ["assistant"], input, output: output.stream, onInterrupt: () => {} });
    session.gatekeeperEvents.emit("refused", { check: "iss", message: `the callback token's iss ${EVIL} is not registered` });
    for (const listener of session.others) {
      listener({
        kind: "task",
        taskId: `${EVIL}old`,
        tenant: "assistant",
        state: "TASK_STATE_COMPLETED",
        body: { task: { status: { state: "TASK_STATE_COMPLETED" }, artifacts: [{ parts: [{ text: `late ${EVIL}` }] }] } },
      });
    }
    await chat.finished;
    const text = output.text();
    expect(text).toContain("assistant ▸ reply \\u001b[2J");
    expect(text).toContain("assistant ▹ chunk \\u001b[2J");
    expect(text).toContain("→ calling \\u001b[2J");
    expect(text).toContain("asked \\u001b[2J");
    expect(text).toContain("late \\u001b[2J");
    expect(text).toContain("iss \\u001b[2J");
    expect(text).not.toMatch(RAW_CONTROL);
  });
});

// ── the answer as it is written ────────────────────────────────────────────

/**
 * A session whose turn streams `chunks` (then ends with `reply`); `statusAfter`
 * is the index of the chunk after which a progress status comes.
 * @param {Array<{ text: string, append: boolean, lastChunk: boolean }>} chunks
 */
function streamingSession(chunks, { reply = chunks.map((c) => c.text).join(""), statusAfter = -1 } = {}) {
  return {
    onOtherPush: () => 0,
    async send(tenant) {
      const stops = stopQueue();
      /** @type {Array<(chunk: any) => void>} */
      const chunkListeners = [];
      /** @type {Array<(text: string, state: string) => void>} */
      const statusListeners = [];
      // The stream runs after the chat listens, one event per turn of the event loop, then the push ends the turn.
      setImmediate(async () => {
        for (const [i, chunk] of chunks.entries()) {
          for (const listener of chunkListeners) listener(chunk);
          if (i === statusAfter) for (const listener of statusListeners) listener("round 1 done", "TASK_STATE_WORKING");
          await new Promise((resolve) => setImmediate(resolve));
        }
        stops.put(ended(reply));
      });
      return {
        tenant,
        taskId: "task-1",
        contextId: "ctx-1",
        messageId: "m1",
        traceId: TRACE_ID,
        done: new Promise(() => {}),
        nextStop: stops.next,
        onStatus: (listener) => statusListeners.push(listener),
        onChunk: (listener) => chunkListeners.push(listener),
        onTracker: () => {},
      };
    },
    async answer() {
      return {};
    },
    async listTasks() {
      return { tasks: [], totalSize: 0 };
    },
    async forgetContext() {
      return { erased: {}, unerased: [] };
    },
    async forgetMe() {
      return { erased: {}, unerased: [] };
    },
    async cancel() {
      return {};
    },
    async getTask() {
      return {};
    },
  };
}

const chunk = (text, append, lastChunk = false) => ({ text, append, lastChunk });

describe("the answer as it streams", () => {
  it("runChat prints the chunks on one line as they come, then one short line when the verified push is that answer", async () => {
    const session = streamingSession([chunk("one ", false), chunk("two ", true), chunk("three", true, true)]);
    const text = await pipedChat(session, ["hi"]);
    expect(text).toContain("the answer streams as it is written, the reply arrives as a signed push");
    expect(text).toContain(`assistant ▹ one two three\nassistant ▸ ${ARRIVED}\n`);
    // The answer is printed once.
    expect(text.split("one two three")).toHaveLength(2);
  });

  it("runChat shows the reply of record whole when it differs from what streamed, or when nothing streamed", async () => {
    const differs = streamingSession([chunk("a draft", false, true)], { reply: "the answer of record" });
    const text = await pipedChat(differs, ["hi"]);
    expect(text).toContain("assistant ▹ a draft\nassistant ▸ the answer of record\n");
    expect(text).not.toContain(ARRIVED);
    const silent = streamingSession([], { reply: "only pushed" });
    expect(await pipedChat(silent, ["hi"])).toContain("assistant ▸ only pushed\n");
  });

  it("runChat breaks the streamed line for a status and goes on after it, and starts a new line when the answer starts over", async () => {
    const session = streamingSession([chunk("draft", false), chunk(" one", true), chunk("final", false), chunk(" answer", true, true)], {
      reply: "final answer",
      statusAfter: 0,
    });
    const text = await pipedChat(session, ["hi"]);
    expect(text).toContain(`assistant ▹ draft\n  · round 1 done\nassistant ▹  one\nassistant ▹ final answer\nassistant ▸ ${ARRIVED}\n`);
  });

  it("runOnce streams on stderr and keeps stdout for the reply alone", async () => {
    const session = streamingSession([chunk("one ", false), chunk("two", true, true)]);
    const stdout = sink();
    const stderr = sink();
    const code = await runOnce({ session, tenant: "assistant", text: "hi", timeoutMs: 5_000, stdout: stdout.stream, stderr: stderr.stream });
    expect(code).toBe(0);
    expect(stdout.text()).toBe("one two\n");
    expect(stderr.text()).toContain("assistant ▹ one two\n");
  });

  it("treats a message answer as the reply", async () => {
    const session = askingSession();
    session.send = async (tenant) => {
      const turn = await askingSession().send(tenant, "x");
      const end = { state: MESSAGE_REPLY, text: "a message, no task", task: undefined };
      return { ...turn, taskId: "", nextStop: async () => ({ kind: "end", end }) };
    };
    const stdout = sink();
    const code = await runOnce({ session, tenant: "assistant", text: "x", timeoutMs: 5_000, stdout: stdout.stream, stderr: sink().stream });
    expect(code).toBe(0);
    expect(stdout.text()).toBe("a message, no task\n");
    const text = await pipedChat(session, ["x"]);
    expect(text).toContain("assistant ▸ a message, no task");
    expect(text).not.toContain("working (task");
  });
});

// ── human in the loop, and conversations ───────────────────────────────────

/** @type {import("../../scripts/dev/session.mjs").HitlRequest} */
const APPROVAL = {
  requestId: "req-1",
  requestKind: "approval",
  prompt: 'May I run save_note with {"text":"to buy milk"}?',
  options: [
    { id: "approve", label: "Approve" },
    { id: "reject", label: "Reject" },
  ],
  allowFreeform: false,
};
/** @type {import("../../scripts/dev/session.mjs").HitlRequest} */
const CHOICE = {
  requestId: "req-2",
  requestKind: "choice",
  prompt: "How should I answer?",
  options: [
    { id: "brief", label: "Briefly" },
    { id: "detailed", label: "In detail" },
  ],
  allowFreeform: false,
};
/** @type {import("../../scripts/dev/session.mjs").HitlRequest} */
const QUESTION = { requestId: "req-3", requestKind: "question", prompt: "What is your name?", options: [], allowFreeform: true };

describe("parseAnswer", () => {
  it("takes approve, yes, y (any case) and reject, no, n with an optional reason for an approval", () => {
    for (const line of ["approve", "Yes", " y ", "APPROVE", "yes please", "1"])
      expect(parseAnswer(APPROVAL, line), line).toEqual({ answer: { optionId: "approve" } });
    for (const line of ["reject", "No", "n", "2"]) expect(parseAnswer(APPROVAL, line), line).toEqual({ answer: { optionId: "reject" } });
    expect(parseAnswer(APPROVAL, "reject too expensive")).toEqual({ answer: { optionId: "reject", text: "too expensive" } });
    expect(parseAnswer(APPROVAL, "no: not now")).toEqual({ answer: { optionId: "reject", text: "not now" } });
    for (const line of ["maybe", "nope", "yesterday", "3", ""]) expect(parseAnswer(APPROVAL, line), line).toHaveProperty("problem");
  });

  it("takes a choice's number, id or label, and free text only when the request allows it", () => {
    expect(parseAnswer(CHOICE, "2")).toEqual({ answer: { optionId: "detailed" } });
    expect(parseAnswer(CHOICE, "brief")).toEqual({ answer: { optionId: "brief" } });
    expect(parseAnswer(CHOICE, "in detail")).toEqual({ answer: { optionId: "detailed" } });
    expect(parseAnswer(CHOICE, "0")).toHaveProperty("problem");
    expect(parseAnswer(CHOICE, "something else")).toHaveProperty("problem");
    expect(parseAnswer({ ...CHOICE, allowFreeform: true }, "something else")).toEqual({ answer: { text: "something else" } });
    expect(parseAnswer({ ...CHOICE, allowFreeform: true }, "1")).toEqual({ answer: { optionId: "brief" } });
  });

  it("takes a question's text as it is (trimmed), and refuses an empty one", () => {
    expect(parseAnswer(QUESTION, "  Ada  ")).toEqual({ answer: { text: "Ada" } });
    expect(parseAnswer(QUESTION, "yes")).toEqual({ answer: { text: "yes" } });
    expect(parseAnswer(QUESTION, " ")).toHaveProperty("problem");
  });
});

/** Stops handed out in order; `next()` waits for one to be put. */
function stopQueue() {
  const queued = [];
  const waiting = [];
  return {
    put: (stop) => (waiting.length ? waiting.shift()(stop) : queued.push(stop)),
    next: () => (queued.length ? Promise.resolve(queued.shift()) : new Promise((resolve) => waiting.push(resolve))),
  };
}

const ended = (text) => ({ kind: "end", end: { state: "TASK_STATE_COMPLETED", text, task: {} } });

/**
 * A session whose agent asks what `script` says: `asks(text)` is the request a
 * turn's text makes (or none), and every answer ends the turn with a reply
 * naming it. Records what was sent and answered.
 * @param {{ asks?: (text: string) => any }} [script]
 */
function askingSession({ asks = () => undefined } = {}) {
  /** @type {Array<{ tenant: string, text: string, contextId?: string }>} */
  const sent = [];
  /** @type {Array<{ taskId: string, requestId?: string, answer: any }>} */
  const answers = [];
  const turns = [];
  return {
    sent,
    answers,
    turns,
    onOtherPush: () => 0,
    async send(tenant, text, options = {}) {
      const n = sent.push({ tenant, text, contextId: options.contextId });
      const stops = stopQueue();
      const turn = {
        tenant,
        taskId: `task-${n}`,
        // As the server does: the conversation named, else a new one.
        contextId: options.contextId ?? `ctx-${n}-0000`,
        messageId: `m${n}`,
        traceId: TRACE_ID,
        done: new Promise(() => {}),
        nextStop: stops.next,
        onStatus: () => {},
        onChunk: () => {},
        onTracker: () => {},
        stops,
      };
      turns.push(turn);
      const request = asks(text);
      stops.put(request ? { kind: "input", request } : ended(`reply to ${text}`));
      return turn;
    },
    async answer(turn, request, answer) {
      answers.push({ taskId: turn.taskId, requestId: request.requestId, answer });
      turn.stops.put(ended(`done after ${JSON.stringify(answer)}`));
      return {};
    },
    /** @type {Array<{ tenant: string, contextId?: string }>} */
    forgotten: /** @type {Array<{ tenant: string, contextId?: string }>} */ ([]),
    async forgetContext(tenant, contextId) {
      this.forgotten.push({ tenant, contextId });
      return { erased: { tasks: 2, events: 9, messages: 6, toolCalls: 0, hitlRequests: 0, pushConfigs: 2, subagents: 0, plugins: 1 }, unerased: [] };
    },
    async forgetMe(tenant) {
      this.forgotten.push({ tenant });
      return {
        erased: { tasks: 3, events: 12, messages: 8, toolCalls: 0, hitlRequests: 0, pushConfigs: 3, subagents: 0, plugins: 0 },
        unerased: [{ plugin: "keeper", rows: 4 }],
      };
    },
    async listTasks() {
      return { tasks: [], totalSize: 0 };
    },
    async cancel() {
      return {};
    },
    async getTask() {
      return {};
    },
  };
}

/** Runs a piped chat over `lines` to its end; returns the output. */
async function pipedChat(session, lines, tenants = ["assistant"]) {
  const output = sink();
  const chat = runChat({ session, tenant: tenants[0], tenants, input: Readable.from([`${lines.join("\n")}\n`]), output: output.stream, onInterrupt: () => {} });
  await chat.finished;
  return output.text();
}

describe("runChat (human in the loop)", () => {
  it("shows an approval with numbered options, takes the next line as the answer, and waits for the turn's end", async () => {
    const session = askingSession({ asks: (text) => (text.startsWith("remember") ? APPROVAL : undefined) });
    const text = await pipedChat(session, ["remember to buy milk", "maybe", "yes", "list my notes"]);
    expect(text).toContain('assistant ? May I run save_note with {"text":"to buy milk"}?\n    1. Approve (approve)\n    2. Reject (reject)\n');
    expect(text).toContain("answer approve (yes, y) or reject (no, n)");
    // "maybe" is no answer: said so, and the request stays open for the next line.
    expect(text).toContain('"maybe" is not an answer here');
    expect(session.answers).toEqual([{ taskId: "task-1", requestId: "req-1", answer: { optionId: "approve" } }]);
    expect(text).toContain('assistant ▸ done after {"optionId":"approve"}');
    // The line after the answer is a new turn, once the first one ended.
    expect(session.sent.map((s) => s.text)).toEqual(["remember to buy milk", "list my notes"]);
    expect(text.indexOf("done after")).toBeLessThan(text.indexOf("reply to list my notes"));
  });

  it("answers a rejection with its reason, a choice by number, and a question with the line's text", async () => {
    const requests = { "save it": APPROVAL, "pick one": CHOICE, "who?": QUESTION };
    const session = askingSession({ asks: (text) => requests[text] });
    await pipedChat(session, ["save it", "reject not today", "pick one", "2", "who?", "Ada Lovelace"]);
    expect(session.answers.map((a) => a.answer)).toEqual([{ optionId: "reject", text: "not today" }, { optionId: "detailed" }, { text: "Ada Lovelace" }]);
    expect(session.answers.map((a) => a.taskId)).toEqual(["task-1", "task-2", "task-3"]);
  });

  it("stops waiting for an answer when the request expires: the next line is a turn of its own", async () => {
    const session = askingSession({ asks: (text) => (text === "ask me" ? QUESTION : undefined) });
    const output = sink();
    const input = new PassThrough();
    const chat = runChat({ session, tenant: "assistant", tenants: ["assistant"], input, output: output.stream, onInterrupt: () => {} });
    input.write("ask me\n");
    await until(() => output.text().includes("What is your name?"));
    session.turns[0].stops.put({ kind: "expired", requestId: "req-3" });
    await until(() => output.text().includes("expired unanswered"));
    session.turns[0].stops.put(ended("carried on"));
    await until(() => output.text().includes("assistant ▸ carried on"));
    input.end("hello\n");
    await chat.finished;
    expect(session.answers).toEqual([]);
    expect(session.sent.map((s) => s.text)).toEqual(["ask me", "hello"]);
  });
});

describe("runChat (conversations)", () => {
  it("keeps one conversation per tenant, says when one starts, and /new starts another", async () => {
    const session = askingSession();
    const text = await pipedChat(
      session,
      ["one", "two", "/tenant researcher", "three", "/tenant assistant", "/new", "four", "five"],
      ["assistant", "researcher"],
    );
    expect(session.sent).toEqual([
      { tenant: "assistant", text: "one", contextId: undefined },
      { tenant: "assistant", text: "two", contextId: "ctx-1-0000" },
      { tenant: "researcher", text: "three", contextId: undefined },
      { tenant: "assistant", text: "four", contextId: undefined },
      { tenant: "assistant", text: "five", contextId: "ctx-4-0000" },
    ]);
    expect(text).toContain("conversation ctx-1-00 with assistant (/new starts another)");
    expect(text).toContain("conversation ctx-3-00 with researcher");
    expect(text).toContain("a new conversation with assistant starts with your next message");
    expect(text.match(/conversation ctx-/g)).toHaveLength(3);
  });

  it("/forget erases the tenant's conversation, whose next message starts another; /forget-me erases the rest, naming what a plugin kept", async () => {
    const session = askingSession();
    const text = await pipedChat(session, ["/forget", "one", "two", "/forget", "three", "/forget-me", "four"]);
    expect(session.forgotten).toEqual([{ tenant: "assistant", contextId: "ctx-1-0000" }, { tenant: "assistant" }]);
    expect(session.sent.map((s) => s.contextId)).toEqual([undefined, "ctx-1-0000", undefined, undefined]);
    expect(text).toContain("no conversation with assistant yet: nothing to forget");
    expect(text).toContain("forgot conversation ctx-1-00 with assistant: 2 tasks, 6 messages, 1 plugin rows");
    expect(text).toContain("forgot everything you left at assistant: 3 tasks, 8 messages, 0 plugin rows; kept by plugins that cannot erase: keeper (4 rows)");
  });
});

describe("runOnce (input required)", () => {
  it("prints the request on stderr and exits 3, answering nothing", async () => {
    const session = askingSession({ asks: () => APPROVAL });
    const stdout = sink();
    const stderr = sink();
    const code = await runOnce({ session, tenant: "assistant", text: "remember x", timeoutMs: 60_000, stdout: stdout.stream, stderr: stderr.stream });
    expect(code).toBe(NEEDS_INPUT_EXIT);
    expect(NEEDS_INPUT_EXIT).toBe(3);
    expect(stderr.text()).toContain("assistant ? May I run save_note");
    expect(stderr.text()).toContain("task task-1 is waiting for your answer, which --once cannot give");
    expect(stdout.text()).toBe("");
    expect(session.answers).toEqual([]);
  });

  it("exits 3 too when no push came in time and GetTask shows the task waiting", async () => {
    const session = askingSession();
    session.send = async (tenant) => ({ ...(await askingSession().send(tenant, "x")), nextStop: () => new Promise(() => {}) });
    session.getTask = async () => ({
      status: { state: "TASK_STATE_INPUT_REQUIRED", message: { parts: [{ text: "Pick" }, { data: { type: HITL_REQUEST_TYPE, ...CHOICE } }] } },
    });
    const stderr = sink();
    const code = await runOnce({ session, tenant: "assistant", text: "x", timeoutMs: 1, stdout: sink().stream, stderr: stderr.stream });
    expect(code).toBe(3);
    expect(stderr.text()).toContain("assistant ? How should I answer?\n    1. Briefly (brief)\n    2. In detail (detailed)");
  });
});

/** Resolves once `condition()` holds, checking after each turn of the event loop (no clock involved). */
async function until(condition) {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).toBe(true);
}

describe("createSession (on the wire)", () => {
  /** @type {import("node:http").Server | undefined} */
  let server;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server) await closeServer(server);
    server = undefined;
  });

  const WORKING = "TASK_STATE_WORKING";

  /**
   * An agent endpoint that records every JSON-RPC call: a streaming call is
   * answered with an event stream whose first event is the task (or
   * `firstEvent`), the rest sent by the test; any other call with the task.
   * A gatekeeper that only mints, a new token each time (`tokens`: the one
   * each call carried). `streamGraceMs` is the session's.
   * @param {{ firstEvent?: Record<string, unknown>, streamGraceMs?: number }} [options]
   */
  async function wire({ firstEvent, streamGraceMs = 20 } = {}) {
    /** @type {Array<{ method: string, params: any, lastEventId?: string, extensions?: string }>} */
    const calls = [];
    /** @type {string[]} */
    const tokens = [];
    /** @type {Array<{ method: string, send: (result: unknown, id: number) => void, comment: (text: string) => void, end: () => void, closed: () => boolean }>} */
    const streams = [];
    server = createServer(async (req, res) => {
      const body = JSON.parse(await readBody(req, 1 << 20));
      const lastEventId = req.headers["last-event-id"];
      const extensions = req.headers["a2a-extensions"];
      calls.push({
        method: body.method,
        params: body.params,
        ...(typeof lastEventId === "string" ? { lastEventId } : {}),
        ...(typeof extensions === "string" ? { extensions } : {}),
      });
      tokens.push(String(req.headers.authorization));
      const message = body.params.message;
      const task = { id: message?.taskId ?? body.params.id ?? "task-1", contextId: message?.contextId ?? "ctx-new", status: { state: "TASK_STATE_SUBMITTED" } };
      if (body.method !== "SendStreamingMessage" && body.method !== "SubscribeToTask")
        return sendJson(res, 200, { jsonrpc: "2.0", id: body.id, result: { task } });
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      let closed = false;
      res.on("close", () => (closed = true));
      const send = (result, id) => res.write(`id: ${id}\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: body.id, result })}\n\n`);
      const comment = (text) => res.write(`: ${text}\n\n`);
      streams.push({ method: body.method, send, comment, end: () => res.end(), closed: () => closed });
      send(firstEvent ?? { task }, Number(lastEventId ?? 1));
    });
    const port = await listen(server, 0, "the test agent", "");
    const events = new EventEmitter();
    let minted = 0;
    const gatekeeper = {
      events,
      pushUrl: "http://127.0.0.1:1/push",
      mint: async () => `token-${++minted}`,
      issueNotificationToken: () => "notif-1",
      bindNotificationToken: () => true,
    };
    const origin = `http://127.0.0.1:${port}`;
    const session = createSession({ gatekeeper, agent: { origin, endpoint: `${origin}/a2a` }, identity: { key: "me" }, streamGraceMs, streamRetryMs: 1 });
    const push = (kind, body) =>
      events.emit("push", {
        agent: origin,
        identityKey: "me",
        messageId: calls[0].params.message.messageId,
        kind,
        state: (body.task ?? body.statusUpdate).status.state,
        body,
      });
    return { calls, tokens, streams, session, push };
  }

  const parked = {
    state: "TASK_STATE_INPUT_REQUIRED",
    timestamp: "2026-12-01T10:00:01.000Z",
    message: { messageId: "ask-1", parts: [{ text: "May I?" }, { data: { type: HITL_REQUEST_TYPE, ...APPROVAL, expiresAt: "2030-01-01T00:00:00.000Z" } }] },
  };
  const answerChunk = (text, append, lastChunk = false) => ({
    artifactUpdate: {
      taskId: "task-1",
      artifact: { artifactId: "answer", parts: [{ text }] },
      ...(append ? { append } : {}),
      ...(lastChunk ? { lastChunk } : {}),
    },
  });
  const completed = (text) => ({ task: { id: "task-1", status: { state: "TASK_STATE_COMPLETED" }, artifacts: [{ parts: [{ text }] }] } });

  it("sends a turn as SendStreamingMessage with a push config, and shows its chunks and progress as they come, each status once", async () => {
    const { calls, streams, session, push } = await wire();
    const turn = await session.send("assistant", "hello", { contextId: "ctx-7" });
    expect(calls[0]).toMatchObject({
      method: "SendStreamingMessage",
      params: {
        tenant: "assistant",
        message: { role: "ROLE_USER", parts: [{ text: "hello" }], contextId: "ctx-7" },
        configuration: { taskPushNotificationConfig: { url: "http://127.0.0.1:1/push", token: "notif-1" } },
      },
    });
    // The default, blocking-or-streaming send: no returnImmediately.
    expect(calls[0].params.configuration).not.toHaveProperty("returnImmediately");
    expect(turn).toMatchObject({ taskId: "task-1", contextId: "ctx-7" });
    const chunks = [];
    const statuses = [];
    turn.onChunk((c) => chunks.push(c));
    turn.onStatus((text, state) => statuses.push([text, state]));
    const progress = { state: WORKING, timestamp: "2026-12-01T10:00:02.000Z", message: { messageId: "p-1", parts: [{ text: "round 1 done" }] } };
    streams[0].send({ statusUpdate: { taskId: "task-1", status: { state: WORKING, timestamp: "2026-12-01T10:00:00.500Z" } } }, 2);
    streams[0].send(answerChunk("one ", false), 3);
    streams[0].send({ statusUpdate: { taskId: "task-1", status: progress } }, 4);
    streams[0].send(answerChunk("two", true, true), 5);
    await until(() => chunks.length === 2);
    expect(chunks).toEqual([
      { text: "one ", append: false, lastChunk: false },
      { text: "two", append: true, lastChunk: true },
    ]);
    // The same progress as a push is not shown again; the bare move to working is not shown at all.
    push("statusUpdate", { statusUpdate: { taskId: "task-1", status: progress } });
    expect(statuses).toEqual([["round 1 done", WORKING]]);
    // The stream's terminal status is not the reply of record: the push is.
    streams[0].send({ statusUpdate: { taskId: "task-1", status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-12-01T10:00:03.000Z" } } }, 6);
    streams[0].end();
    let ended = false;
    void turn.done.then(() => (ended = true));
    await until(() => streams[0].closed());
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBe(false);
    expect(calls).toHaveLength(1);
    push("task", completed("one two"));
    expect(await turn.nextStop()).toMatchObject({ kind: "end", end: { state: "TASK_STATE_COMPLETED", text: "one two" } });
    session.close();
  });

  it("activates progress on its streams, and tells each tracker once as it starts and once as it ends, not as a status", async () => {
    const { calls, streams, session, push } = await wire();
    const turn = await session.send("assistant", "forecast please");
    expect(calls[0].extensions).toBe(PROGRESS);
    const changes = [];
    const statuses = [];
    turn.onTracker((c) => changes.push(`${c.change} ${c.kind} ${c.id} ${c.status} ${c.message}`));
    turn.onStatus((text) => statuses.push(text));
    const at = (n) => `2026-12-01T10:00:0${n}.000Z`;
    const tracker = (id, status, message, extra = {}) => ({ id, status, message, startedAt: at(1), updatedAt: at(1), ...extra });
    const progress = (n, trackers) => {
      const metadata = { [PROGRESS]: { trackers } };
      return {
        statusUpdate: {
          taskId: "task-1",
          status: { state: WORKING, timestamp: at(n), message: { messageId: `p-${n}`, parts: [{ text: trackers[0].message }], metadata } },
          metadata,
        },
      };
    };
    const first = progress(1, [tracker("tool:a", "running", "calling forecast"), tracker("round:1", "running", "round 1")]);
    streams[0].send(first, 2);
    streams[0].send(
      progress(2, [tracker("tool:a", "running", "calling forecast", { progress: 1, total: 3 }), tracker("mcp:b", "running", "calling docs__lookup")]),
      3,
    );
    streams[0].send(
      progress(3, [
        tracker("tool:a", "completed", "forecast done"),
        tracker("mcp:b", "failed", "docs__lookup failed"),
        tracker("round:1", "completed", "round 1 done"),
      ]),
      4,
    );
    // The first snapshot again, as a push after the stream's later ones: nothing starts again.
    push("statusUpdate", first);
    await until(() => changes.length === 6);
    expect(changes).toEqual([
      "started tool tool:a running calling forecast",
      "started round round:1 running round 1",
      "started mcp mcp:b running calling docs__lookup",
      "ended tool tool:a completed forecast done",
      "ended mcp mcp:b failed docs__lookup failed",
      "ended round round:1 completed round 1 done",
    ]);
    expect(statuses).toEqual([]);
    const lines = [];
    turn.onTracker((c) => lines.push(trackerLine(c)));
    expect(lines.filter(Boolean)).toEqual(["  → calling forecast", "  → calling docs__lookup", "  ✓ forecast done", "  ✗ docs__lookup failed"]);
    session.close();
  });

  it("stops on the request (stream and push, one stop), follows on with SubscribeToTask from the last event, and answers on the task", async () => {
    const { calls, streams, session, push } = await wire();
    const turn = await session.send("assistant", "remember to buy milk", { contextId: "ctx-7" });
    const chunks = [];
    turn.onChunk((c) => chunks.push(c.text));
    streams[0].send({ statusUpdate: { taskId: "task-1", status: parked } }, 3);
    // The same request as a push, twice (a retried push): still one stop.
    push("statusUpdate", { statusUpdate: { taskId: "task-1", status: parked } });
    push("statusUpdate", { statusUpdate: { taskId: "task-1", status: parked } });
    const stop = await turn.nextStop();
    expect(stop).toEqual({ kind: "input", request: { ...APPROVAL, expiresAt: "2030-01-01T00:00:00.000Z" } });

    // The stream closes at input required; the session subscribes again from the last event it saw.
    streams[0].end();
    await until(() => calls.length === 2 && streams.length === 2);
    expect(calls[1]).toEqual({ method: "SubscribeToTask", params: { tenant: "assistant", id: "task-1" }, lastEventId: "3", extensions: PROGRESS });

    await session.answer(turn, /** @type {any} */ (stop).request, { optionId: "reject", text: "not now" });
    expect(calls[2]).toMatchObject({
      method: "SendMessage",
      params: {
        message: {
          taskId: "task-1",
          contextId: "ctx-7",
          parts: [{ data: { type: HITL_RESPONSE_TYPE, requestId: "req-1", optionId: "reject", text: "not now" } }],
        },
        // The answer returns at once (the subscription shows the rest) and the task keeps its own push config.
        configuration: { returnImmediately: true },
      },
    });
    expect(calls[2].params.message.messageId).not.toBe(calls[0].params.message.messageId);
    expect(calls[2].params.configuration).not.toHaveProperty("taskPushNotificationConfig");

    // The subscription's snapshot is not news; its events are.
    streams[1].send({ statusUpdate: { taskId: "task-1", status: { state: WORKING, timestamp: "2026-12-01T10:00:04.000Z" } } }, 4);
    streams[1].send(answerChunk("not saved", false, true), 5);
    await until(() => chunks.length === 1);
    expect(chunks).toEqual(["not saved"]);

    push("task", completed("not saved"));
    expect(await turn.nextStop()).toMatchObject({ kind: "end", end: { state: "TASK_STATE_COMPLETED", text: "not saved" } });
    expect((await turn.done).text).toBe("not saved");
    // Its end closes what is left of the stream (silent here: the end waited for it a little).
    await until(() => streams[1].closed());
    session.close();
  });

  it("picks a stream cut short up again from the last event it saw, a few times, then leaves the turn to its pushes", async () => {
    const { calls, streams, session, push } = await wire();
    const turn = await session.send("assistant", "hello");
    const chunks = [];
    turn.onChunk((c) => chunks.push(c.text));
    streams[0].send({ statusUpdate: { taskId: "task-1", status: { state: WORKING, timestamp: "2026-12-01T10:00:01.000Z" } } }, 2);
    streams[0].send(answerChunk("one ", false), 3);
    // Closed with the task still working: not the closing rule, so the connection was lost (its object reset, say).
    streams[0].end();
    await until(() => streams.length === 2);
    expect(calls[1]).toEqual({ method: "SubscribeToTask", params: { tenant: "assistant", id: "task-1" }, lastEventId: "3", extensions: PROGRESS });
    streams[1].send(answerChunk("two", true, true), 4);
    await until(() => chunks.length === 2);
    expect(chunks).toEqual(["one ", "two"]);
    // Cut again and again: three tries in all, then no more.
    streams[1].end();
    await until(() => streams.length === 3);
    streams[2].end();
    await until(() => streams.length === 4);
    expect(calls.slice(2).map((c) => c.lastEventId)).toEqual(["4", "4"]);
    streams[3].end();
    await until(() => streams[3].closed());
    for (let i = 0; i < 200; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(streams).toHaveLength(4);
    push("task", completed("one two"));
    expect(await turn.nextStop()).toMatchObject({ kind: "end", end: { text: "one two" } });
    session.close();
  });

  it("resumes a stream the agent ended early at once, with a fresh token, from the last event, as often as the agent ends one", async () => {
    const { calls, tokens, streams, session, push } = await wire();
    const turn = await session.send("assistant", "hello");
    const chunks = [];
    turn.onChunk((c) => chunks.push(c.text));
    streams[0].send({ statusUpdate: { taskId: "task-1", status: { state: WORKING, timestamp: "2026-12-01T10:00:01.000Z" } } }, 2);
    streams[0].send(answerChunk("one ", false), 3);
    // More often than the cuts the session takes: an early end, said so, is not a cut.
    for (let n = 1; n <= 4; n++) {
      streams[n - 1].comment("keepalive");
      streams[n - 1].comment("closing: token expired; resume with a fresh token and Last-Event-ID");
      streams[n - 1].end();
      await until(() => streams.length === n + 1);
      expect(calls[n]).toEqual({ method: "SubscribeToTask", params: { tenant: "assistant", id: "task-1" }, lastEventId: "3", extensions: PROGRESS });
    }
    streams[4].send(answerChunk("two", true, true), 4);
    await until(() => chunks.length === 2);
    // The resumed streams' snapshots are not news.
    expect(chunks).toEqual(["one ", "two"]);
    expect(new Set(tokens).size).toBe(5);
    push("task", completed("one two"));
    expect(await turn.nextStop()).toMatchObject({ kind: "end", end: { text: "one two" } });
    session.close();
  });

  it("lets the stream say what it still carries before the verified end: the push and the stream race", async () => {
    const { streams, session, push } = await wire({ streamGraceMs: 60_000 });
    const turn = await session.send("assistant", "hello");
    const seen = [];
    turn.onChunk((c) => seen.push(c.text));
    void turn.nextStop().then((stop) => seen.push(stop.kind));
    push("task", completed("all of it"));
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
    streams[0].send(answerChunk("all of it", false, true), 2);
    streams[0].send({ statusUpdate: { taskId: "task-1", status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-12-01T10:00:03.000Z" } } }, 3);
    streams[0].end();
    await until(() => seen.length === 2);
    expect(seen).toEqual(["all of it", "end"]);
    session.close();
  });

  it("answers a question in plain text, starts a new conversation without contextId, and reports an expiry", async () => {
    const { calls, session, push } = await wire();
    const turn = await session.send("assistant", "ask me a question");
    expect(calls[0].params.message).not.toHaveProperty("contextId");
    expect(turn.contextId).toBe("ctx-new");
    push("statusUpdate", {
      statusUpdate: {
        taskId: "task-1",
        status: { state: "TASK_STATE_INPUT_REQUIRED", message: { parts: [{ data: { type: HITL_REQUEST_TYPE, ...QUESTION } }] } },
      },
    });
    const stop = /** @type {any} */ (await turn.nextStop());
    await session.answer(turn, stop.request, { text: "Ada" });
    expect(calls.find((c) => c.method === "SendMessage")?.params.message.parts).toEqual([{ text: "Ada" }]);
    push("statusUpdate", {
      statusUpdate: {
        taskId: "task-1",
        status: { state: "TASK_STATE_WORKING", message: { parts: [{ text: "Nobody answered" }, { data: { type: HITL_TIMEOUT_TYPE, requestId: "req-9" } }] } },
      },
    });
    expect(await turn.nextStop()).toEqual({ kind: "expired", requestId: "req-9" });
    session.close();
  });

  it("takes a message answer as the whole reply: the turn ends with it, and there is no task", async () => {
    const { session } = await wire({ firstEvent: { message: { messageId: "r-1", role: "ROLE_AGENT", contextId: "ctx-m", parts: [{ text: "just this" }] } } });
    const turn = await session.send("assistant", "hi");
    expect(turn).toMatchObject({ taskId: "", contextId: "ctx-m" });
    expect(await turn.nextStop()).toEqual({ kind: "end", end: { state: MESSAGE_REPLY, text: "just this", task: undefined } });
    session.close();
  });

  it("says what a refused stream says", async () => {
    server = createServer(async (req, res) => {
      const body = JSON.parse(await readBody(req, 1 << 20));
      sendJson(res, 200, { jsonrpc: "2.0", id: body.id, error: { code: -32602, message: "Invalid params: params.message.parts" } });
    });
    const port = await listen(server, 0, "the test agent", "");
    const events = new EventEmitter();
    let minted = 0;
    const gatekeeper = {
      events,
      pushUrl: "http://127.0.0.1:1/push",
      mint: async () => `token-${++minted}`,
      issueNotificationToken: () => "n",
      bindNotificationToken: () => true,
    };
    const origin = `http://127.0.0.1:${port}`;
    const session = createSession({ gatekeeper, agent: { origin, endpoint: `${origin}/a2a` }, identity: { key: "me" } });
    await expect(session.send("assistant", "hi")).rejects.toThrow("SendStreamingMessage failed: Invalid params: params.message.parts (JSON-RPC -32602)");
    session.close();
  });

  it("reads a request without its data part as a question whose prompt is the text", () => {
    expect(hitlRequestOf({ parts: [{ text: "Which one?" }] })).toEqual({ requestKind: "question", prompt: "Which one?", options: [], allowFreeform: true });
  });
});
