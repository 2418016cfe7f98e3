import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE } from "@dynamicagents/core/a2a";
import { resolveConfig } from "@dynamicagents/core/agent";
import { ConfigError } from "@dynamicagents/core/errors";
import { callerObjectName } from "@dynamicagents/core/worker";
import type { AgentEvent, EventCatalogue, EventLine } from "@dynamicagents/core/telemetry";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { credentialedFetch, McpRefused } from "../src/mcp/index.js";
import { mark } from "./support/agents.js";
import { captureConsole, type CapturedConsole } from "./support/console-capture.js";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { MCP_LEAK, MCP_SERVERS, STRADDLE_SECRET } from "./support/mcp-agent.js";
import { chatCompletion, chatToolCall, eventually, type ModelCall } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";
import { useMarkerHarness } from "./support/turn-harness.js";

// MCP servers from config alone (test/support/mcp-agent.ts), against real
// MCP servers over streamable HTTP (test/support/mcp-fixture.mjs, reached
// through the pool's outbound service): their tools go through the same
// journal, approvals, redaction, abort and events as a plugin's.

const harness = useMarkerHarness();
const edge = markerEdge();
const TOKEN = env.MCP_TOKEN!;

const newCaller = () => ({ tenant: "mcp", identity: { key: `caller-${crypto.randomUUID()}`, name: "Ada" } });
type Caller = ReturnType<typeof newCaller>;
const rpc = (method: string, params: Record<string, unknown>, caller: Caller) => call(method, params, { worker: edge.fetch, mint: caller });

let captured: CapturedConsole;
beforeEach(() => {
  captured = captureConsole();
});
afterEach(() => captured[Symbol.dispose]());

interface Stats {
  calls: Record<string, number>;
  cancelled: number;
  sessions: number;
  open: number;
  lastAuthorized: boolean;
}
const statsOf = async (key: string): Promise<Stats> => (await fetch(`https://mcp.test/${key}/__stats`)).json();

const toolMessages = (c: ModelCall) => c.messages.filter((m) => m.role === "tool");
const instructionsOf = (c: ModelCall) => String(c.messages.find((m) => m.role === "system")?.content ?? "");
/** Calls `name` once, then answers with what the tool returned. */
function callsOnce(name: string, args: Record<string, unknown> = {}) {
  harness.outbound.model = (c) =>
    toolMessages(c).length === 0 ? chatToolCall(name, args, c.model) : chatCompletion(`got: ${JSON.stringify(toolMessages(c).at(-1)?.content)}`, c.model);
}

async function send(caller: Caller, text: string) {
  const reply = await rpc("SendMessage", sendParams(text, undefined, PUSH_URL), caller);
  expect(reply.body.error).toBeUndefined();
  return reply.body.result.task as { id: string; contextId: string };
}

async function finished(taskId: string) {
  return (await eventually(
    () => harness.outbound.pushes.find((p) => p.body.task?.id === taskId && p.body.task.status.state !== "TASK_STATE_INPUT_REQUIRED"),
    (p) => p !== undefined,
    "the terminal push",
  ))!.body.task;
}

const serverEvents = () => captured.events().filter((e): e is EventLine<"mcp.server", EventCatalogue["mcp.server"]> & AgentEvent => e.event === "mcp.server");
const toolEvents = (taskId: string) =>
  captured.events().filter((e): e is EventLine<"tool.call", EventCatalogue["tool.call"]> & AgentEvent => e.event === "tool.call" && e.taskId === taskId);

describe("an agent's MCP servers", () => {
  it("offer their tools namespaced by server, with their schemas; a call reaches the server with the credential from its secret", async () => {
    const before = await statsOf("docs");
    callsOnce("docs__whoami");
    const caller = newCaller();
    const task = await send(caller, "who am I to the docs server?");
    const done = await finished(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");

    const [first] = harness.outbound.modelCalls;
    expect(first!.tools.filter((t) => t.includes("__")).sort()).toEqual(
      ["docs__fails", "docs__leak", "docs__lookup", "docs__slow", "docs__steps", "docs__whoami", "gated__lookup", "gated__whoami"]
        .concat(["huge_blocks", "huge_structured", "many_blocks", "straddle"].map((t) => `bulk__${t}`))
        .sort(),
    );
    expect(first!.toolDescriptions.docs__lookup).toBeTruthy();
    // The model got the server's answer: the bearer token matched, and it was never echoed.
    expect(JSON.stringify(toolMessages(harness.outbound.modelCalls.at(-1)!))).toContain('\\"authorized\\":true');
    const after = await statsOf("docs");
    expect(after.calls.whoami).toBe((before.calls.whoami ?? 0) + 1);
    expect(after.lastAuthorized).toBe(true);
    expect(toolEvents(task.id).map((e) => e.data)).toEqual([expect.objectContaining({ tool: "docs__whoami", outcome: "ok" })]);
    for (const line of captured.lines()) expect(line).not.toContain(TOKEN);
  });

  it("a server down or slow at start never holds the turn: its tools are absent, the model is told in the agent's words, each status is an event", async () => {
    callsOnce("docs__lookup", { term: "durable objects" });
    const caller = newCaller();
    const task = await send(caller, "look it up");
    expect((await finished(task.id)).status.state).toBe("TASK_STATE_COMPLETED");

    const [first] = harness.outbound.modelCalls;
    expect(first!.tools.some((t) => t.startsWith("down__") || t.startsWith("slowstart__"))).toBe(false);
    expect(instructionsOf(first!)).toContain(`${mark("mcp-unavailable")}down,slowstart`);
    expect(JSON.stringify(toolMessages(harness.outbound.modelCalls.at(-1)!))).toContain("found: durable objects");

    const statuses = Object.fromEntries(serverEvents().map((e) => [e.data.server, e.data]));
    expect(statuses.docs).toMatchObject({ status: "ready", tools: 6 });
    expect(statuses.gated).toMatchObject({ status: "ready", tools: 2 });
    expect(statuses.down).toMatchObject({ status: "unavailable", tools: 0 });
    expect(statuses.slowstart).toMatchObject({ status: "unavailable", reason: "timeout" });
  });

  it("a tool's error reaches the model as the call's error, and the turn goes on to an answer", async () => {
    callsOnce("docs__fails");
    const task = await send(newCaller(), "try the failing one");
    expect((await finished(task.id)).status.state).toBe("TASK_STATE_COMPLETED");
    expect(JSON.stringify(toolMessages(harness.outbound.modelCalls.at(-1)!))).toContain("lookup backend exploded");
    expect(toolEvents(task.id).map((e) => e.data)).toEqual([expect.objectContaining({ tool: "docs__fails", outcome: "error" })]);
  });

  it("its result is redacted before the model or the journal's event sees it", async () => {
    callsOnce("docs__leak");
    const task = await send(newCaller(), "show me the leak");
    const done = await finished(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    const seen = JSON.stringify(harness.outbound.modelCalls.at(-1)!.messages);
    expect(seen).toContain(mark("redacted"));
    expect(seen).not.toContain(MCP_LEAK);
    expect(JSON.stringify(done)).not.toContain(MCP_LEAK);
    expect(toolEvents(task.id).map((e) => e.data)).toEqual([expect.objectContaining({ tool: "docs__leak", outcome: "ok", redacted: true })]);
  });

  it("goes through the tool-call journal: the fallback model re-making the call gets the recorded result, the server sees it once", async () => {
    const before = await statsOf("docs");
    harness.outbound.model = (c) => {
      if (toolMessages(c).length === 0) return chatToolCall("docs__lookup", { term: "journaled" }, c.model);
      // The primary fails after its tool step; the fallback starts over and calls the same tool.
      if (c.model === "primary-model") return new Response("upstream down", { status: 500 });
      return chatCompletion(`got: ${JSON.stringify(toolMessages(c).at(-1)?.content)}`, c.model);
    };
    const task = await send(newCaller(), "look it up, once");
    expect((await finished(task.id)).status.state).toBe("TASK_STATE_COMPLETED");
    expect(JSON.stringify(toolMessages(harness.outbound.modelCalls.at(-1)!))).toContain("found: journaled");
    expect((await statsOf("docs")).calls.lookup).toBe((before.calls.lookup ?? 0) + 1);
    expect(toolEvents(task.id).map((e) => e.data.outcome)).toEqual(["ok", "replayed"]);
  });

  it("a tool its server's config does not name as trusted parks the task for approval, and runs only once approved", async () => {
    const before = await statsOf("gated");
    callsOnce("gated__lookup", { term: "approved term" });
    const caller = newCaller();
    const task = await send(caller, "look it up on the gated server");
    const waiting = await eventually(
      async () => (await rpc("GetTask", { id: task.id }, caller)).body.result,
      (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED",
      "the task to wait for approval",
    );
    const request = waiting.status.message.parts.find((p: { data?: { type?: string } }) => p.data?.type === HITL_REQUEST_TYPE)!.data;
    expect(request).toMatchObject({ requestKind: "approval", prompt: mark("approval-prompt") });
    expect(harness.outbound.modelCalls).toHaveLength(1);
    expect((await statsOf("gated")).calls.lookup ?? 0).toBe(before.calls.lookup ?? 0);

    const answer = {
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        taskId: task.id,
        parts: [{ data: { type: HITL_RESPONSE_TYPE, requestId: request.requestId, optionId: "approve" } }],
      },
      configuration: { returnImmediately: true, taskPushNotificationConfig: { url: PUSH_URL, token: "notify-secret" } },
    };
    expect((await rpc("SendMessage", answer, caller)).body.error).toBeUndefined();
    const done = await finished(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(JSON.stringify(toolMessages(harness.outbound.modelCalls.at(-1)!))).toContain("found: approved term");
    expect((await statsOf("gated")).calls.lookup).toBe((before.calls.lookup ?? 0) + 1);
  });

  it("a tool named as trusted runs without approval, on the same server as one that needs it", async () => {
    const before = await statsOf("gated");
    callsOnce("gated__whoami");
    const task = await send(newCaller(), "who am I to the gated server?");
    const done = await finished(task.id);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(
      harness.outbound.pushes.some((p) => p.body.statusUpdate?.taskId === task.id && p.body.statusUpdate.status.state === "TASK_STATE_INPUT_REQUIRED"),
    ).toBe(false);
    expect(harness.outbound.modelCalls).toHaveLength(2);
    expect((await statsOf("gated")).calls.whoami).toBe((before.calls.whoami ?? 0) + 1);
  });

  it("a dropped connection is reconnected: the call after it goes through, and both are events", async () => {
    callsOnce("docs__lookup", { term: "first" });
    const caller = newCaller();
    const first = await send(caller, "first");
    expect((await finished(first.id)).status.state).toBe("TASK_STATE_COMPLETED");

    // The server forgets every session: the object's next request meets a 404 and must reconnect.
    expect((await fetch("https://mcp.test/docs/__drop", { method: "POST" })).ok).toBe(true);
    callsOnce("docs__lookup", { term: "second" });
    const second = await send(caller, "second");
    expect((await finished(second.id)).status.state).toBe("TASK_STATE_COMPLETED");
    expect(JSON.stringify(toolMessages(harness.outbound.modelCalls.at(-1)!))).toContain("found: second");
    const docs = serverEvents()
      .filter((e) => e.data.server === "docs")
      .map((e) => [e.data.status, e.data.reason]);
    expect(docs).toEqual([
      ["ready", undefined],
      ["dropped", "session-lost"],
      ["ready", undefined],
    ]);
  });

  it("a cancel during a slow MCP call aborts the request on the server, and the canceled push follows at once", async () => {
    const before = await statsOf("docs");
    harness.outbound.model = (c) => chatToolCall("docs__slow", {}, c.model);
    const caller = newCaller();
    const task = await send(caller, "take your time");
    await eventually(
      () => statsOf("docs"),
      (s) => (s.calls.slow ?? 0) > (before.calls.slow ?? 0),
      "the slow call to reach the server",
    );
    expect((await rpc("CancelTask", { id: task.id }, caller)).body.result.status.state).toBe("TASK_STATE_CANCELED");
    await eventually(
      () => statsOf("docs"),
      (s) => s.cancelled > before.cancelled,
      "the server to see the cancellation",
    );
    await eventually(
      () => harness.outbound.pushes.filter((p) => (p.body.task?.id ?? p.body.statusUpdate?.taskId) === task.id),
      (pushes) => pushes.some((p) => (p.body.task?.status ?? p.body.statusUpdate?.status)?.state === "TASK_STATE_CANCELED"),
      "the canceled push",
    );
    expect(harness.outbound.modelCalls).toHaveLength(1);
  });

  it("a caller's erasure ends its sessions with the servers (docs/retention.md), and the next turn connects anew", async () => {
    callsOnce("docs__lookup", { term: "erased" });
    const caller = newCaller();
    await finished((await send(caller, "look it up")).id);
    const before = await statsOf("docs");
    expect((await rpc("dynamicagents/DeleteCallerData", {}, caller)).body.result.erased.tasks).toBe(1);
    const after = await statsOf("docs");
    expect(after.open).toBe(before.open - 1);
    callsOnce("docs__lookup", { term: "again" });
    expect((await finished((await send(caller, "and again")).id)).status.state).toBe("TASK_STATE_COMPLETED");
    expect((await statsOf("docs")).sessions).toBe(after.sessions + 1);
  });
});

describe("what a tool returns is capped (tools.maxResultBytes), MCP servers' and plugins' alike", () => {
  const CAP = resolveConfig().tools.maxResultBytes;
  const bytes = (text: string) => new TextEncoder().encode(text).byteLength;
  const journalOf = (key: string, taskId: string) =>
    runInDurableObject(env.MARKER_MCP!.get(env.MARKER_MCP!.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "mcp", key }))), (_i, state) =>
      state.storage.sql
        .exec<{ tool_name: string; output_json: string | null }>("SELECT tool_name, output_json FROM tool_calls WHERE task_id = ?", taskId)
        .toArray(),
    );

  /** One turn whose model calls `name` and then answers: what the model was given of the result, and the journal's row of the call. */
  async function resultOf(name: string) {
    harness.outbound.model = (c) => (c.toolResults.length === 0 ? chatToolCall(name, {}, c.model) : chatCompletion("done", c.model));
    const caller = newCaller();
    const task = await send(caller, `call ${name}`);
    expect((await finished(task.id)).status.state).toBe("TASK_STATE_COMPLETED");
    // The exchange after the call (a compaction's summary request may follow the turn).
    const given = harness.outbound.modelCalls.filter((c) => c.toolResults.length > 0).map((c) => c.toolResults);
    expect(given.map((results) => results.map((r) => r.toolName))).toEqual([[name]]);
    const rows = await journalOf(caller.identity.key, task.id);
    expect(rows.map((r) => r.tool_name)).toEqual([name]);
    return { given: given[0]![0]!.content, journaled: rows[0]!.output_json! };
  }

  /** The cut result as the model reads it: within the cap, its beginning, and the agent's note saying it was cut. */
  function expectCut(text: string) {
    expect(bytes(text)).toBeLessThanOrEqual(CAP);
    const cut = JSON.parse(text) as { truncated: boolean; note: string; result: unknown };
    expect(cut).toMatchObject({ truncated: true, note: mark("tool-result-cut") });
    // Most of the room is the result's own.
    expect(bytes(JSON.stringify(cut.result))).toBeGreaterThan(CAP * 0.9);
    return cut.result;
  }

  it("an MCP tool's 3 MB structuredContent: the model and the journal get its first rows, within the cap, and the note", async () => {
    const { given, journaled } = await resultOf("bulk__huge_structured");
    expect(journaled).toBe(given);
    const result = expectCut(given) as { rows: Array<{ id: number; text: string }> };
    expect(result.rows[0]).toMatchObject({ id: 0 });
    expect(result.rows.length).toBeGreaterThan(100);
    expect(result.rows.length).toBeLessThan(30_000);
  });

  it("an MCP tool's three 1 MB text blocks: their text, cut within the cap, and the note", async () => {
    const { given, journaled } = await resultOf("bulk__huge_blocks");
    expect(journaled).toBe(given);
    expect(expectCut(given)).toMatch(/^block 1: lorem ipsum/);
  });

  it("an MCP tool's 50,000 content blocks: the first of them, within the cap, and the note", async () => {
    const { given, journaled } = await resultOf("bulk__many_blocks");
    expect(journaled).toBe(given);
    const blocks = expectCut(given) as string[];
    expect(blocks[0]).toMatch(/^block 0: /);
    expect(blocks.length).toBeGreaterThan(100);
    expect(blocks.length).toBeLessThan(50_000);
  });

  it("a plugin tool's 3 MB result: the same cap, the same note", async () => {
    const { given, journaled } = await resultOf("bulk_rows");
    expect(journaled).toBe(given);
    const result = expectCut(given) as { rows: Array<{ id: number }> };
    expect(result.rows[0]).toMatchObject({ id: 0 });
  });

  it("a secret where the cap cuts is redacted whole: the redactors read past the cut, so no part of one reaches the model or the journal", async () => {
    const { given, journaled } = await resultOf("bulk__straddle");
    expect(journaled).toBe(given);
    const text = expectCut(given) as string;
    // The cut falls among the secrets (each replaced), and not one character of a secret is left.
    expect(text).toContain(mark("redacted"));
    expect(given).not.toContain(STRADDLE_SECRET[0]);
  });
});

describe("MCP servers' guards", () => {
  it("a server off the allowlist refuses the start, by name", () => {
    const config = () => resolveConfig({ mcp: { allowlist: ["https://mcp.test"], servers: [{ name: "evil", url: "https://evil.test/mcp" }] } });
    expect(config).toThrow(ConfigError);
    expect(config).toThrow(/evil.*https:\/\/evil\.test.*mcp\.allowlist/);
    try {
      config();
    } catch (error) {
      expect((error as ConfigError).culprit).toEqual({ kind: "config", name: "mcp.servers.0.url" });
    }
  });

  it("a server's tools are untrusted unless named: the old opt-in `approval` field is refused by name, never ignored", () => {
    const server = { name: "docs", url: MCP_SERVERS.docs };
    expect(resolveConfig({ mcp: { allowlist: ["https://mcp.test"], servers: [server] } }).mcp.servers[0]!.trustedTools).toEqual([]);
    const old = () => resolveConfig({ mcp: { allowlist: ["https://mcp.test"], servers: [{ ...server, approval: ["lookup"] } as typeof server] } });
    expect(old).toThrow(ConfigError);
    expect(old).toThrow(/mcp\.servers\.0\.approval/);
  });

  it("a request off the allowlist (a redirect, an endpoint named elsewhere) is never sent, so the credential stays home", async () => {
    const sent: string[] = [];
    const original = globalThis.fetch;
    globalThis.fetch = async (input: RequestInfo | URL) => {
      sent.push(new Request(input).url);
      return new Response("{}");
    };
    try {
      const guarded = credentialedFetch(
        { name: "docs", url: MCP_SERVERS.docs, bearerSecret: "MCP_TOKEN", headerSecrets: {}, trustedTools: [] },
        { allowlist: ["https://mcp.test"], env: new Map([["MCP_TOKEN", TOKEN]]) },
      );
      await expect(guarded("https://elsewhere.test/mcp", { method: "POST" })).rejects.toBeInstanceOf(McpRefused);
      await guarded(MCP_SERVERS.docs, { method: "POST" });
      expect(sent).toEqual([MCP_SERVERS.docs]);
    } finally {
      globalThis.fetch = original;
    }
  });
});
