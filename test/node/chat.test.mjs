// The chat of `npm start` prints what agents send: control characters in it are
// shown escaped, so a reply cannot drive the developer's terminal.
import { EventEmitter } from "node:events";
import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { runChat, runOnce } from "../../scripts/dev/chat.mjs";
import { printable } from "../../scripts/dev/terminal.mjs";

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
      return {
        tenant,
        taskId: `${EVIL}task`,
        messageId: "m1",
        done: Promise.resolve({ state: endState, text: `reply ${EVIL} end`, task: {} }),
        // Status pushes land while the turn runs.
        onStatus: (listener) => listener(`status ${EVIL}`, "TASK_STATE_WORKING"),
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
    async getTask() {
      return { status: { state: EVIL } };
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
    const input = Readable.from(["hello\n/tasks\n/cancel\n"]);
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
    expect(text).toContain("asked \\u001b[2J");
    expect(text).toContain("late \\u001b[2J");
    expect(text).toContain("iss \\u001b[2J");
    expect(text).not.toMatch(RAW_CONTROL);
  });
});
