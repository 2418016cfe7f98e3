import { TRACE_KEY, traceOfRequest } from "@dynamicagents/core/a2a";
import type { SentRequest } from "@dynamicagents/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureConsole, type CapturedConsole } from "./support/console-capture.js";
import { PUSH_URL } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { chatCompletion, chatToolCall, eventually } from "./support/outbound.js";
import { restCall } from "./support/rest.js";
import { call, userMessage } from "./support/rpc.js";
import { useMarkerHarness } from "./support/turn-harness.js";

// W3C trace context (docs/telemetry.md "Trace context"): a send's
// `traceparent` is the turn's trace, and the turn's requests to the model, to
// MCP servers and to the caller's gatekeeper are spans of it; a fetch of an
// allowlisted file starts a trace of its own; `tracestate` goes back to the
// gatekeeper only. The agent is the specs' MCP agent (test/support/mcp-agent.ts)
// against the MCP fixture's server `docs`.

const harness = useMarkerHarness();
const edge = markerEdge();

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const TRACESTATE = "gatekeeper=t61rcWkgMzE,other@vendor=x";
const FILE_URL = "https://files.test/notes.txt";

let captured: CapturedConsole;
beforeEach(() => {
  captured = captureConsole();
});
afterEach(() => captured[Symbol.dispose]());

const newCaller = () => ({ tenant: "mcp", identity: { key: `caller-${crypto.randomUUID()}`, name: "Ada" } });

/** A send with a file URL part and a push config back to the gatekeeper, carrying `headers`; the model looks a term up on the MCP server first. */
async function sendTraced(headers: Record<string, string>) {
  harness.outbound.pages.set(FILE_URL, () => new Response("the notes", { headers: { "Content-Type": "text/plain" } }));
  harness.outbound.model = (c) =>
    c.toolResults.length === 0 ? chatToolCall("docs__lookup", { term: "trace" }, c.model) : chatCompletion("looked up", c.model);
  const message = userMessage("look it up", undefined, { parts: [{ text: "look it up" }, { url: FILE_URL, mediaType: "text/plain" }] });
  const reply = await call(
    "SendMessage",
    { message, configuration: { returnImmediately: true, taskPushNotificationConfig: { url: PUSH_URL, token: "notify-secret" } } },
    { worker: edge.fetch, mint: newCaller(), headers },
  );
  expect(reply.body.error).toBeUndefined();
  const task = reply.body.result.task as { id: string; metadata?: Record<string, unknown> };
  const push = await eventually(
    () => harness.outbound.pushes.find((p) => p.body.task?.id === task.id),
    (p) => p !== undefined,
    "the terminal push",
  );
  expect(push!.body.task.status.state).toBe("TASK_STATE_COMPLETED");
  return { accepted: task, done: push!.body.task as { id: string; metadata?: Record<string, unknown> } };
}

/** What each kind of request the turn made carried. */
function sent() {
  const requests = harness.outbound.requests;
  const to = (origin: string) => requests.filter((r) => new URL(r.url).origin === origin);
  return {
    model: to("https://model.test"),
    mcp: to("https://mcp.test"),
    file: to("https://files.test"),
    pushes: harness.outbound.pushes.map((p) => ({ traceparent: p.headers.get("traceparent"), tracestate: p.headers.get("tracestate") })),
    all: requests,
  };
}

const traceIdOf = (r: Pick<SentRequest, "traceparent">) => traceOfRequest(r.traceparent)?.traceId;
const spanOf = (r: Pick<SentRequest, "traceparent">) => traceOfRequest(r.traceparent)?.parentId;

describe("a send's traceparent", () => {
  it("is the trace of the model's, the MCP server's and the push's requests, a new span each; tracestate goes to the push only", async () => {
    const { accepted, done } = await sendTraced({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
    const { model, mcp, file, pushes, all } = sent();

    // The task names its trace.
    expect(accepted.metadata?.[TRACE_KEY]).toBe(TRACE_ID);
    expect(done.metadata?.[TRACE_KEY]).toBe(TRACE_ID);

    // The model: both requests (the tool call's step, then the answer), in the turn's trace.
    expect(model.length).toBeGreaterThanOrEqual(2);
    expect(model.map(traceIdOf)).toEqual(model.map(() => TRACE_ID));
    // The MCP server: the tool call's requests join the trace (the connection's own handshake does not).
    const traced = mcp.filter((r) => r.traceparent !== undefined);
    expect(traced.length).toBeGreaterThanOrEqual(1);
    expect(traced.map(traceIdOf)).toEqual(traced.map(() => TRACE_ID));
    // The push: the trace, and the caller's tracestate.
    expect(pushes.length).toBeGreaterThanOrEqual(1);
    expect(pushes.map((p) => traceOfRequest(p.traceparent)?.traceId)).toEqual(pushes.map(() => TRACE_ID));
    expect(pushes.map((p) => p.tracestate)).toEqual(pushes.map(() => TRACESTATE));

    // A new span per request, none of them the caller's own.
    const spans = [...model, ...traced, ...pushes.map((p) => ({ traceparent: p.traceparent ?? undefined }))].map(spanOf);
    expect(spans.every((span) => span !== undefined && span !== PARENT_ID)).toBe(true);
    expect(new Set(spans).size).toBe(spans.length);

    // The allowlisted file: fetched in a trace of its own, never the caller's.
    expect(file).toHaveLength(1);
    expect(traceIdOf(file[0]!)).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf(file[0]!)).not.toBe(TRACE_ID);

    // tracestate reached no one but the gatekeeper.
    expect(all.filter((r) => r.tracestate !== undefined).map((r) => r.url)).toEqual(all.filter((r) => r.tracestate !== undefined).map(() => PUSH_URL));

    // Every event of the task names the trace, the Workflow's push attempts too.
    const events = captured.events().filter((e) => e.taskId === accepted.id);
    const names = new Set(events.map((e) => e.event));
    for (const name of ["task.accepted", "turn.started", "model.call", "tool.started", "tool.call", "turn.finished", "push.attempt"])
      expect(names).toContain(name);
    expect(events.filter((e) => e.traceId !== TRACE_ID).map((e) => e.event)).toEqual([]);
  });

  it("malformed, is ignored: the call succeeds, its turn has a trace of its own, and no tracestate goes anywhere", async () => {
    const malformed = `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`;
    const { accepted } = await sendTraced({ traceparent: malformed, tracestate: TRACESTATE });
    const { model, pushes, all } = sent();

    const own = accepted.metadata?.[TRACE_KEY];
    expect(own).toMatch(/^[0-9a-f]{32}$/);
    expect(own).not.toBe(TRACE_ID);
    expect(model.map(traceIdOf)).toEqual(model.map(() => own));
    expect(pushes.map((p) => traceOfRequest(p.traceparent)?.traceId)).toEqual(pushes.map(() => own));
    expect(all.filter((r) => r.tracestate !== undefined)).toEqual([]);
  });

  it("absent, a turn starts its own trace, and its pushes carry no tracestate", async () => {
    const { accepted } = await sendTraced({});
    const { pushes } = sent();
    const own = accepted.metadata?.[TRACE_KEY];
    expect(own).toMatch(/^[0-9a-f]{32}$/);
    expect(pushes.map((p) => traceOfRequest(p.traceparent)?.traceId)).toEqual(pushes.map(() => own));
    expect(pushes.map((p) => p.tracestate)).toEqual(pushes.map(() => null));
  });
});

describe("a send over HTTP+JSON", () => {
  it("keeps its traceparent for its turn too", async () => {
    harness.outbound.model = (c) => chatCompletion("answered", c.model);
    const params = { message: userMessage("over rest"), configuration: { returnImmediately: true, taskPushNotificationConfig: { url: PUSH_URL } } };
    const reply = await restCall("SendMessage", params, { worker: edge.fetch, mint: newCaller(), headers: { traceparent: TRACEPARENT } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const task = reply.body.task as { id: string; metadata?: Record<string, unknown> };
    expect(task.metadata?.[TRACE_KEY]).toBe(TRACE_ID);
    await eventually(
      () => harness.outbound.pushes.find((p) => p.body.task?.id === task.id),
      (p) => p !== undefined,
      "the terminal push",
    );
    const { model, pushes } = sent();
    expect(model.map(traceIdOf)).toEqual(model.map(() => TRACE_ID));
    expect(pushes.map((p) => traceOfRequest(p.traceparent)?.traceId)).toEqual(pushes.map(() => TRACE_ID));
  });
});

describe("traceOfRequest", () => {
  it("reads version 00 and later versions as W3C Trace Context says, and ignores what is malformed", () => {
    expect(traceOfRequest(TRACEPARENT, TRACESTATE)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: "01", state: TRACESTATE });
    // Only the sampled flag is kept; a later version is read by its first four fields.
    expect(traceOfRequest(`00-${TRACE_ID}-${PARENT_ID}-03`)?.flags).toBe("01");
    expect(traceOfRequest(`cc-${TRACE_ID}-${PARENT_ID}-00-what-comes-next`)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: "00" });
    for (const bad of [
      "",
      `ff-${TRACE_ID}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-${PARENT_ID}-01-extra`,
      `00-${"0".repeat(32)}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-${"0".repeat(16)}-01`,
      `00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-${PARENT_ID.toUpperCase()}-01`,
    ]) {
      expect(traceOfRequest(bad, TRACESTATE), bad).toBeUndefined();
    }
  });

  it("keeps tracestate opaque but bounded: a malformed member drops it, a long one is cut to whole members", () => {
    expect(traceOfRequest(TRACEPARENT, "Upper=1")?.state).toBeUndefined();
    expect(traceOfRequest(TRACEPARENT, Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","))?.state).toBeUndefined();
    const long = Array.from({ length: 30 }, (_, i) => `key${i}=${"v".repeat(20)}`);
    const kept = traceOfRequest(TRACEPARENT, long.join(","))!.state!;
    expect(kept.length).toBeLessThanOrEqual(512);
    expect(long.join(",").startsWith(kept)).toBe(true);
    expect(kept.split(",").every((member) => long.includes(member))).toBe(true);
  });
});
