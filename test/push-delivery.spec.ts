import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { GATEKEEPER, OTHER_GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { call, userMessage } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

const newCaller = (tenant = "assistant") => ({ tenant, identity: { key: `caller-${crypto.randomUUID()}` } });
const SECRET_QUERY = "sig=q-s3cr3t-in-the-query";
const TOKEN = "tok-s3cr3t-notification-token";
/** A second config of the caller's: on its own gatekeeper too, as every push config of a caller is. */
const SECOND_URL = `${GATEKEEPER}/hooks/a2a`;

const harness = useTurnHarness();

/** Every console line of the spec, as text (errors with their stack). */
let logged: string[] = [];
beforeEach(() => {
  logged = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}\n${a.stack}` : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
    });
  }
});
afterEach(() => vi.restoreAllMocks());

/**
 * Runs `body` while GATEKEEPER_ORIGINS holds only `origins`: an operator
 * redeploying with a shorter list. In the test pool the Workflow's `this.env`
 * is this same object, so the real turn Workflow sees the change at its next
 * delivery, exactly as it would read a new deployment's env.
 */
async function withGatekeeperOrigins<T>(origins: string[], body: () => Promise<T>): Promise<T> {
  const mutable = env as { GATEKEEPER_ORIGINS?: string };
  const saved = mutable.GATEKEEPER_ORIGINS;
  mutable.GATEKEEPER_ORIGINS = JSON.stringify(origins);
  try {
    return await body();
  } finally {
    mutable.GATEKEEPER_ORIGINS = saved;
  }
}

/** Holds the first model call until released, so the spec can act before any delivery. */
function holdFirstModelCall(answer: (c: ModelCall, n: number) => Response) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  let calls = 0;
  harness.outbound.model = async (c) => {
    const n = calls++;
    if (n === 0) {
      entered();
      await gate;
    }
    return answer(c, n);
  };
  return { started, release };
}

async function onlyInstance() {
  const instances = await eventually(
    () => harness.workflows.get(),
    (found) => found.length > 0,
    "the turn's Workflow instance",
  );
  expect(instances).toHaveLength(1);
  return instances[0]!;
}

const sendWithPush = (text: string, url: string, caller: ReturnType<typeof newCaller>) =>
  call(
    "SendMessage",
    { message: userMessage(text), configuration: { returnImmediately: true, taskPushNotificationConfig: { url, token: TOKEN } } },
    { mint: caller },
  );

describe("the allowlist, again at every delivery", () => {
  it("never calls a config whose origin left GATEKEEPER_ORIGINS after it was accepted, however many the task has", async () => {
    const held = holdFirstModelCall((c) => chatCompletion("the answer", c.model));
    const caller = newCaller();
    const removed = `${PUSH_URL}?${SECRET_QUERY}`;
    const task = (await sendWithPush("still trusted?", removed, caller)).body.result.task;
    expect((await call("CreateTaskPushNotificationConfig", { taskId: task.id, id: "second", url: SECOND_URL }, { mint: caller })).body.error).toBeUndefined();
    await held.started;

    const before = harness.outbound.requests.length;
    await withGatekeeperOrigins([OTHER_GATEKEEPER], async () => {
      held.release();
      await (await onlyInstance()).waitForStatus("complete");
    });

    const after = harness.outbound.requests.slice(before);
    expect(after.filter((r) => new URL(r.url).origin === GATEKEEPER)).toEqual([]);
    expect(harness.outbound.pushes).toEqual([]);
    // Said once per config, by origin and path, and not retried.
    const skipped = logged.filter((line) => line.includes("push to") && line.includes("skipped"));
    expect(skipped).toHaveLength(2);
    expect(skipped.filter((line) => line.includes(`push to ${PUSH_URL} skipped`))).toHaveLength(1);
    expect(skipped.filter((line) => line.includes(`push to ${SECOND_URL} skipped`))).toHaveLength(1);
    expect(logged.join("\n")).not.toContain(SECRET_QUERY);
  });

  it("skips progress pushes to that origin too", async () => {
    const page = "https://developers.cloudflare.com/allowlist-page";
    harness.outbound.pages.set(page, () => new Response("<p>Some page.</p>"));
    const held = holdFirstModelCall((c) => {
      if (String(c.messages[0]?.content ?? "").startsWith("Summarise what the page says")) return chatCompletion("a summary", c.model);
      const results = c.messages.some((m) => String(m.content ?? "").startsWith("Results of the subtasks"));
      return results
        ? chatCompletion("researched", c.model)
        : chatToolCall("delegate", { subtasks: [{ type: "read_page", params: { url: page, question: "q" } }] }, c.model);
    });
    const caller = newCaller("researcher");
    expect((await sendWithPush("research it", `${PUSH_URL}?${SECRET_QUERY}`, caller)).body.error).toBeUndefined();
    await held.started;

    const before = harness.outbound.requests.length;
    await withGatekeeperOrigins([OTHER_GATEKEEPER], async () => {
      held.release();
      await (await onlyInstance()).waitForStatus("complete");
    });

    expect(harness.outbound.requests.slice(before).filter((r) => new URL(r.url).origin === GATEKEEPER)).toEqual([]);
    expect(harness.outbound.pushes).toEqual([]);
    // The progress push and the terminal one, each skipped.
    expect(logged.filter((line) => line.includes(`push to ${PUSH_URL} skipped`))).toHaveLength(2);
    expect(logged.join("\n")).not.toContain(SECRET_QUERY);
  });
});

describe("a push URL's query and token stay out of logs and step errors", () => {
  const secretUrl = `${PUSH_URL}?${SECRET_QUERY}`;
  const assertNothingSecretLogged = () => {
    const all = logged.join("\n");
    expect(all).not.toContain(SECRET_QUERY);
    expect(all).not.toContain(TOKEN);
  };

  it("a push refused for good: the log names origin and path only, and the turn still completes", async () => {
    harness.outbound.pushReplies.set(secretUrl, () => new Response("nope", { status: 400 }));
    await sendWithPush("x", secretUrl, newCaller());
    await (await onlyInstance()).waitForStatus("complete");
    expect(logged.some((line) => line.includes(`push to ${PUSH_URL} answered HTTP 400 (permanent)`))).toBe(true);
    assertNothingSecretLogged();
  });

  it("a push that gets no answer: a network error quoting the URL is scrubbed, and the push is tried again", async () => {
    let tries = 0;
    harness.outbound.pushReplies.set(secretUrl, () => {
      if (tries++ === 0) throw new TypeError(`connection reset by peer: POST ${secretUrl}`);
      return new Response(null, { status: 200 });
    });
    await sendWithPush("x", secretUrl, newCaller());
    await (await onlyInstance()).waitForStatus("complete");
    expect(tries).toBe(2);
    expect(logged.some((line) => line.includes(`push to ${PUSH_URL} got no answer: TypeError: connection reset by peer: POST ${PUSH_URL}`))).toBe(true);
    assertNothingSecretLogged();
  });

  it("a failed progress push is logged by origin and path only", async () => {
    const page = "https://developers.cloudflare.com/log-page";
    harness.outbound.pages.set(page, () => new Response("<p>Some page.</p>"));
    harness.outbound.model = (c) => {
      if (String(c.messages[0]?.content ?? "").startsWith("Summarise what the page says")) return chatCompletion("a summary", c.model);
      const results = c.messages.some((m) => String(m.content ?? "").startsWith("Results of the subtasks"));
      return results
        ? chatCompletion("researched", c.model)
        : chatToolCall("delegate", { subtasks: [{ type: "read_page", params: { url: page, question: "q" } }] }, c.model);
    };
    // The progress push (the first) fails; the final one is accepted.
    let answered = 0;
    harness.outbound.pushReplies.set(secretUrl, () => new Response(null, { status: answered++ === 0 ? 500 : 200 }));
    await sendWithPush("research", secretUrl, newCaller("researcher"));
    await (await onlyInstance()).waitForStatus("complete");
    expect(logged.some((line) => line.includes(`push to ${PUSH_URL} answered HTTP 500 (transient)`))).toBe(true);
    assertNothingSecretLogged();
  });
});
