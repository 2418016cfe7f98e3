import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { AgentDB } from "@dynamicagents/core/db";
import { callerHash } from "@dynamicagents/core/telemetry";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { captureConsole } from "./support/console-capture.js";
import { markerEdge } from "./support/isolated-edge.js";
import { eventually } from "./support/outbound.js";
import { call, userMessage } from "./support/rpc.js";
import { useMarkerHarness } from "./support/turn-harness.js";

// docs/protocol.md "The edge, in order", step 7: a Workers rate-limiting
// binding caps each caller's requests. TEST_RATE_LIMITER is a real one
// (miniflare's, vitest.config.ts): 3 a minute.

const harness = useMarkerHarness();

/** Sent through full turns: no line of output may hold it (scripts/check/canaries.mjs). */
const CANARY_TEXT = "canary-text-5d8e21";
const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";

function newCaller() {
  const key = `caller-${crypto.randomUUID()}`;
  return {
    key,
    mint: { tenant: "marker", identity: { key } },
    stub: env.MARKER_AGENT!.get(env.MARKER_AGENT!.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "marker", key }))),
  };
}

/**
 * The binding counts in windows aligned to the clock's minutes: a spec that
 * needs its calls in one window starts them early enough in one.
 */
async function earlyInAWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 8_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

const accepted = (stub: ReturnType<typeof newCaller>["stub"], messageId: string) =>
  runInDurableObject(stub, (_instance, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).priorSends.of(messageId) !== undefined);

describe("the per-caller rate limit", () => {
  it("refuses a caller's fourth call in the period with 429 QUOTA_EXCEEDED: nothing created, no object, no model; another caller goes on", async () => {
    await earlyInAWindow();
    using output = captureConsole();
    const edge = markerEdge({}, { rateLimiter: (e) => e.TEST_RATE_LIMITER });
    const who = newCaller();
    const send = (text: string, messageId: string, id: number) =>
      call(
        "SendMessage",
        { message: userMessage(text, messageId), configuration: { returnImmediately: true, taskPushNotificationConfig: { url: PUSH_URL, token: "t" } } },
        { worker: edge.fetch, mint: who.mint, id },
      );

    const taskIds: string[] = [];
    for (let n = 1; n <= 3; n++) {
      const reply = await send(`${CANARY_TEXT} turn ${n}`, `m-${n}`, n);
      expect(reply.status, `call ${n}`).toBe(200);
      taskIds.push(reply.body.result.task.id);
    }
    const addressed = edge.doAccesses();
    const fourth = await send("the fourth call", "m-4", 4);
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get("Retry-After")).toBe("60");
    expect(fourth.body).toEqual({
      jsonrpc: "2.0",
      id: 4,
      error: {
        code: -32000,
        message: expect.any(String),
        data: [{ "@type": ERROR_INFO, reason: "QUOTA_EXCEEDED", domain: "dynamicagents.dev", metadata: { limit: "rateLimit", retryAfterSeconds: "60" } }],
      },
    });
    expect(edge.doAccesses()).toBe(addressed);

    // Another caller in the same window is unaffected.
    const other = await call("ListTasks", {}, { worker: edge.fetch, mint: newCaller().mint });
    expect(other.status).toBe(200);
    expect(other.body.result.tasks).toEqual([]);

    // The three turns run to their ends; the refused call reached neither the object nor the model.
    for (const id of taskIds) {
      await eventually(
        () => harness.outbound.pushes.find((p) => p.body.task?.id === id && p.body.task.status.state === "TASK_STATE_COMPLETED"),
        (push) => push !== undefined,
        `the terminal push of ${id}`,
      );
    }
    await edge.backgroundSettled();
    expect(harness.outbound.modelCalls).toHaveLength(3);
    expect(JSON.stringify(harness.outbound.modelCalls.map((c) => c.messages))).not.toContain("the fourth call");
    expect(await accepted(who.stub, "m-1")).toBe(true);
    expect(await accepted(who.stub, "m-4")).toBe(false);

    // The refusal is two events, under the caller's hash and the token's tenant.
    const caller = await callerHash(env.A2A_SIGNING_KEY, { gatekeeper: GATEKEEPER, tenant: "marker", key: who.key });
    const events = output.events().filter((e) => e.event === "quota.exceeded" || e.event === "edge.refused");
    expect(events).toEqual([
      expect.objectContaining({ event: "quota.exceeded", tenant: "marker", caller, data: { limit: "rateLimit", retryAfterSeconds: 60 } }),
      expect.objectContaining({
        event: "edge.refused",
        tenant: "marker",
        caller,
        data: { check: "rate-limit", status: 429, code: -32000, method: "SendMessage" },
      }),
    ]);
    const lines = output.lines().join("\n");
    for (const secret of [CANARY_TEXT, who.key, env.OPENAI_API_KEY!]) expect(lines).not.toContain(secret);
    expect(lines).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
  }, 30_000);

  it("is A2A_RATE_LIMITER by default, and without a binding nobody is limited", async () => {
    await earlyInAWindow();
    const limited = markerEdge({ A2A_RATE_LIMITER: env.TEST_RATE_LIMITER });
    const unlimited = markerEdge();
    const who = newCaller();
    const statuses = async (worker: typeof limited.fetch) => {
      const seen: number[] = [];
      for (let n = 0; n < 5; n++) seen.push((await call("ListTasks", {}, { worker, mint: who.mint })).status);
      return seen;
    };
    expect(await statuses(unlimited.fetch)).toEqual([200, 200, 200, 200, 200]);
    expect(await statuses(limited.fetch)).toEqual([200, 200, 200, 429, 429]);
    // The limit is the binding's, not the edge's: the unlimited edge still answers that caller.
    expect(await statuses(unlimited.fetch)).toEqual([200, 200, 200, 200, 200]);
    await limited.backgroundSettled();
  }, 30_000);

  it("a limiter that fails lets the call through, and says so without naming the caller", async () => {
    using output = captureConsole();
    const edge = markerEdge({}, { rateLimiter: () => ({ limit: () => Promise.reject(new Error("limiter down")) }) });
    const who = newCaller();
    const reply = await call("ListTasks", {}, { worker: edge.fetch, mint: who.mint });
    expect(reply.status).toBe(200);
    const lines = output.lines();
    expect(lines.some((line) => line.includes("rate limiter failed"))).toBe(true);
    expect(lines.join("\n")).not.toContain(who.key);
  });
});
