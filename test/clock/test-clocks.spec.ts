import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { DEAD_LETTERS_KEY, HITL_REQUEST_TYPE, HITL_TIMEOUT_TYPE } from "@dynamicagents/core/a2a";
import type { CallerObject, TurnObject } from "@dynamicagents/core/boundary";
import { ROTATED_GATEKEEPER_FIXTURE_JWK, createAgentHarness, publicHalf, scriptedChatModel } from "@dynamicagents/core/testing";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import { isolatedEdge } from "../support/isolated-edge.js";
import { eventually } from "../support/outbound.js";
import { driven, openTurnOf } from "../support/turns.js";

// Test clocks (docs/gatekeeper.md "Test clocks"), against a Worker whose gatekeepers are all on
// loopback and whose clocks are set short (vitest.config.ts, project "test-clock"): a push given
// up within seconds, a question that expires within seconds, a removed gatekeeper key refused
// once the shortened cache age has passed, a dead letter that keeps its task only that long;
// and a deployment off loopback that sets a clock refuses every request, naming the variable.
// Each waits a few seconds at most; the timeouts leave room for a loaded machine.

const GATEKEEPER = "http://127.0.0.1:9999";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isPush = (request: Request) => request.method === "POST" && new URL(request.url).pathname === "/a2a/notifications";

describe("a push schedule on a test clock", () => {
  it("gives a push up within seconds, and records it as a dead letter with status 0 when no attempt got an answer", { timeout: 20_000 }, async () => {
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant", gatekeeper: GATEKEEPER });
    let attempts = 0;
    using _gatekeeper = harness.interceptGatekeeper({
      model: scriptedChatModel(["done"]),
      respond: (request) => {
        if (!isPush(request)) return undefined;
        attempts++;
        throw new TypeError("connection refused");
      },
    });
    const started = Date.now();
    const task = await harness.send("hello");
    const letters = await eventually(
      async () => (await harness.call("GetTask", { id: task.id })).result?.metadata?.[DEAD_LETTERS_KEY],
      (found) => Array.isArray(found) && found.length > 0,
      "the dead letter",
    );
    // First retry after 100 ms, at most 200 ms apart, for 1.5 s: given up within seconds, not an hour.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(letters).toEqual([{ configId: expect.any(String), seq: expect.any(Number), status: 0, at: expect.any(String) }]);
    expect(attempts).toBeGreaterThanOrEqual(4);
  });
});

describe("a question on a test clock", () => {
  it("expires within seconds: the task goes back to work with the timeout announced, and completes", { timeout: 20_000 }, async () => {
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant", gatekeeper: GATEKEEPER });
    const model = scriptedChatModel((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: "ask_user", args: { question: "Which city?" } }] }
        : `no answer: ${request.toolResults[0]!.content}`,
    );
    using gatekeeper = harness.interceptGatekeeper({ model });
    const sent = Date.now();
    const task = await harness.send("what's the weather?");
    const asked = await eventually(
      () => gatekeeper.pushes.find((p) => p.body.statusUpdate?.taskId === task.id && p.body.statusUpdate.status.state === "TASK_STATE_INPUT_REQUIRED"),
      (push) => push !== undefined,
      "the input-required push",
    );
    const request = asked!.body.statusUpdate.status.message.parts.find((p: { data?: { type?: string } }) => p.data?.type === HITL_REQUEST_TYPE).data;
    // The clock's 1.5 s, not the agent's day.
    expect(Date.parse(request.expiresAt) - sent).toBeLessThanOrEqual(1_500 + 2_000);

    const done = await gatekeeper.terminal(task.id, { timeoutMs: 15_000 });
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    const timedOut = gatekeeper.pushes.find((p) =>
      p.body.statusUpdate?.status?.message?.parts?.some((part: { data?: { type?: string } }) => part.data?.type === HITL_TIMEOUT_TYPE),
    );
    expect(timedOut?.body.statusUpdate.status.state).toBe("TASK_STATE_WORKING");
  });
});

describe("a gatekeeper's key set on a test clock", () => {
  it("refuses a key removed from the gatekeeper's JWKS once the shortened cache age (1 s) has passed", { timeout: 20_000 }, async () => {
    // A gatekeeper of its own, so that no other spec's calls have filled its cache.
    const harness = createAgentHarness({ worker: exports.default, tenant: "assistant", gatekeeper: "http://localhost:9999" });
    using gatekeeper = harness.interceptGatekeeper();
    expect((await harness.call("ListTasks", {})).result.tasks).toEqual([]);
    // The harness's key leaves the JWKS; the Worker's copy still holds it until it ages out.
    gatekeeper.jwks = [publicHalf(ROTATED_GATEKEEPER_FIXTURE_JWK)];
    expect((await harness.call("ListTasks", {})).result.tasks).toEqual([]);
    await sleep(1_100);
    // The edge's 401 (docs/protocol.md "The edge, in order", step 2), which the harness hands back as it came.
    expect((await harness.call("ListTasks", {})) as unknown).toMatchObject({ error: "invalid_token", check: "signature" });
  });
});

describe("a dead letter on a test clock", () => {
  it("keeps its finished task from retention only as long as the clock says (1 s), then retention deletes it", { timeout: 20_000 }, async () => {
    const key = `caller-${crypto.randomUUID()}`;
    const stub = env.MARKER_AGENT!.get(env.MARKER_AGENT!.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "marker", key })));
    const object = driven<CallerObject & TurnObject>(stub);
    const begun = await object.beginTask({
      tenant: "marker",
      origin: "http://127.0.0.1:8787",
      message: { messageId: "m-dead", role: "ROLE_USER", parts: [{ text: "x" }] },
    });
    if (!begun.ok || "message" in begun.value) throw new Error("not a task");
    const taskId = begun.value.task.id;
    await object.finishTurn(taskId, { state: "TASK_STATE_COMPLETED", text: "done" });
    await object.deadLetter(taskId, [{ configId: "c-1", seq: 3, status: 404, at: new Date().toISOString() }]);
    await object.turnDelivered(taskId, await openTurnOf(stub, taskId));
    const sweep = () => runInDurableObject(stub, (instance) => (instance as unknown as { sweepRetention(): Promise<unknown> }).sweepRetention());

    // The marker agent keeps finished tasks no time at all: only the dead letter keeps this one.
    expect(await sweep()).toEqual({ tasks: 0, messageIds: 0, conversations: 0 });
    expect((await object.getTask({ taskId })).ok).toBe(true);
    await sleep(1_100);
    expect(await sweep()).toEqual({ tasks: 1, messageIds: 0, conversations: 0 });
    expect((await object.getTask({ taskId })).ok).toBe(false);
  });
});

describe("a test clock off loopback", () => {
  const get = (edge: ReturnType<typeof isolatedEdge>, path: string) => edge.fetch(new Request(`http://127.0.0.1:8787${path}`));
  const post = (edge: ReturnType<typeof isolatedEdge>) =>
    edge.fetch(new Request("http://127.0.0.1:8787/a2a", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }));

  it("makes a Worker whose gatekeeper is not on loopback refuse every request, naming the variable", async () => {
    const edge = isolatedEdge({}, { GATEKEEPER_ORIGINS: JSON.stringify(["http://127.0.0.1:9999", "https://gatekeeper.example.com"]) });
    for (const response of [await get(edge, "/.well-known/agent-card.json"), await get(edge, "/.well-known/jwks.json"), await post(edge)]) {
      expect(response.status).toBe(500);
      const body = (await response.json()) as { error: string; error_description: string; culprit: unknown };
      expect(body.error).toBe("server_misconfigured");
      expect(body.culprit).toEqual({ kind: "setting", name: "TEST_CLOCK_PUSH_FIRST_RETRY_MS" });
      expect(body.error_description).toContain("https://gatekeeper.example.com is not");
    }
    expect(edge.doAccesses()).toBe(0);
  });

  it("makes a Worker with a public origin off loopback refuse every request too, and a bad value is named", async () => {
    const offLoopback = isolatedEdge({}, { PUBLIC_ORIGIN: "https://agents.example.com" });
    const refused = await get(offLoopback, "/.well-known/agent-card.json");
    expect(refused.status).toBe(500);
    expect(((await refused.json()) as { error_description: string }).error_description).toContain("PUBLIC_ORIGIN https://agents.example.com is not");

    const badValue = isolatedEdge({}, { TEST_CLOCK_QUESTION_EXPIRY_MS: "soon" });
    const named = await get(badValue, "/.well-known/agent-card.json");
    expect(named.status).toBe(500);
    expect(((await named.json()) as { culprit: unknown }).culprit).toEqual({ kind: "setting", name: "TEST_CLOCK_QUESTION_EXPIRY_MS" });

    // On loopback, with sound values, the same Worker serves.
    expect((await get(isolatedEdge(), "/.well-known/agent-card.json")).status).toBe(200);
  });
});
