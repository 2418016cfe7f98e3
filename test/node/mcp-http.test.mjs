// The MCP server of @dynamicagents/core/testing/node (src/testing/node/mcp-server.ts)
// that authors' specs, the workerd specs' fixture and npm start's dev tools are
// built on: sessions, tools from definitions (zod or JSON Schema), tool errors
// (returned or thrown), progress, a restart's 404 and the client's re-initialize,
// cancellation reaching the handler; and the Node adapter of scripts/dev
// (mcp-http.mjs) streaming its answers.
import { createMcpServer } from "@dynamicagents/core/testing/node";
import { createServer, request as httpRequest } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { nodeListener, serveMcp } from "../../scripts/dev/mcp-http.mjs";
import { closeServer, listen } from "../../scripts/dev/http.mjs";
import { connectMcp } from "./support/mcp-client.mjs";

const textOf = (result) => result.content.map((block) => block.text).join("");

describe("createMcpServer", () => {
  /** The handler of `slow` has started: its signal, once per call. @type {Array<(signal: AbortSignal) => void>} */
  let started;
  /** @type {ReturnType<typeof createMcpServer>} */
  let mcp;
  /** @type {Awaited<ReturnType<typeof serveMcp>>} */
  let served;
  /** @type {any[]} */
  let clients;

  beforeEach(async () => {
    started = [];
    clients = [];
    mcp = createMcpServer({
      name: "test-tools",
      tools: [
        { name: "echo", description: "Says it back.", inputSchema: z.object({ text: z.string() }), handler: ({ text }) => `echo: ${text}` },
        {
          name: "add",
          description: "Adds, from a plain JSON Schema.",
          inputSchema: { type: "object", properties: { a: { type: "integer", minimum: 0 }, b: { type: "integer" } }, required: ["a", "b"] },
          handler: ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
        },
        { name: "broken", description: "Fails as a tool does.", handler: () => ({ isError: true, content: [{ type: "text", text: "the backend is down" }] }) },
        {
          name: "slow",
          description: "Waits for its signal.",
          handler: (_args, { signal }) =>
            new Promise((resolve) => {
              started.shift()?.(signal);
              signal.addEventListener("abort", () => resolve("stopped"), { once: true });
            }),
        },
      ],
    });
    served = await serveMcp(mcp, { port: 0 });
  });

  afterEach(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await mcp.dropSessions();
    await served.close();
  });

  const connect = async () => {
    const client = await connectMcp(served.url);
    clients.push(client);
    return client;
  };
  /** Resolves to the signal of the next `slow` call, once its handler runs. @returns {Promise<AbortSignal>} */
  const nextSlowCall = () => new Promise((resolve) => started.push(resolve));

  it("opens a session on initialize, lists the tools with their schemas, and calls them", async () => {
    const client = await connect();
    expect(client.transport?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["echo", "add", "broken", "slow"]);
    expect(tools[0].inputSchema).toMatchObject({ type: "object", properties: { text: { type: "string" } }, required: ["text"] });
    expect(tools[1].inputSchema).toMatchObject({ properties: { a: { type: "integer", minimum: 0 } }, required: ["a", "b"] });
    expect(tools[2].inputSchema).toMatchObject({ type: "object" });

    expect(await client.callTool({ name: "echo", arguments: { text: "hi" } })).toEqual({ content: [{ type: "text", text: "echo: hi" }] });
    expect(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })).toMatchObject({ structuredContent: { sum: 5 } });
    expect(mcp.stats).toEqual({ sessions: 1, sessionsOpened: 1, calls: { echo: 1, add: 1 }, cancelled: 0 });
  });

  it("answers a tool's failure as a tool error (isError), and refuses bad arguments before the handler", async () => {
    const client = await connect();
    const failed = await client.callTool({ name: "broken", arguments: {} });
    expect(failed).toEqual({ isError: true, content: [{ type: "text", text: "the backend is down" }] });
    const invalid = await client.callTool({ name: "add", arguments: { a: -1, b: 1 } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/a must be >= 0/);
    expect(mcp.stats.calls).toEqual({ broken: 1 });
  });

  it("forgets every session on dropSessions: the client's next request gets 404, and initializing again works", async () => {
    const client = await connect();
    const oldSession = client.transport?.sessionId;
    await client.callTool({ name: "echo", arguments: { text: "before" } });
    expect(await mcp.dropSessions()).toBe(1);
    expect(mcp.stats.sessions).toBe(0);

    const lost = await client.callTool({ name: "echo", arguments: { text: "after" } }).catch((error) => error);
    expect(lost.status).toBe(404);
    // As it went over the wire: the stale session id is refused, whatever the request.
    const raw = await fetch(served.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": oldSession },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    });
    expect(raw.status).toBe(404);

    const again = await connect();
    expect(again.transport?.sessionId).not.toBe(oldSession);
    expect(textOf(await again.callTool({ name: "echo", arguments: { text: "again" } }))).toBe("echo: again");
    expect(mcp.stats).toMatchObject({ sessions: 1, sessionsOpened: 2, calls: { echo: 2 } });
  });

  it("takes nothing but initialize without a session: the client's server/discover probe gets 400, so it falls back", async () => {
    const post = (body) =>
      fetch(served.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify(body),
      });
    const probe = await post({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} });
    expect(probe.status).toBe(400);
    expect(await probe.json()).toMatchObject({ error: { code: -32000 } });
    expect((await post({ jsonrpc: "2.0", id: 2, method: "tools/list" })).status).toBe(400);
    expect(mcp.stats.sessionsOpened).toBe(0);
    // No standalone stream to hold open: GET is not offered.
    expect((await fetch(served.url, { headers: { Accept: "text/event-stream" } })).status).toBe(405);
  });

  it("aborts the handler's signal when the client cancels the call, and counts it", async () => {
    const client = await connect();
    const cancel = new AbortController();
    const handlerSignal = nextSlowCall();
    const call = client.callTool({ name: "slow", arguments: {} }, { signal: cancel.signal }).catch((error) => error);
    const signal = await handlerSignal;
    expect(signal.aborted).toBe(false);
    cancel.abort();
    expect((await call).name).toMatch(/AbortError|SdkError/);
    await expect.poll(() => signal.aborted).toBe(true);
    await expect.poll(() => mcp.stats.cancelled).toBe(1);
  });

  it("aborts the handler's signal when the HTTP exchange carrying the call goes away", async () => {
    // A session by hand, so that the call's own HTTP request can be cut.
    const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    const init = await fetch(served.url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
      }),
    });
    const session = /** @type {string} */ (init.headers.get("mcp-session-id"));
    await init.text();
    const inSession = { ...headers, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25" };
    await fetch(served.url, { method: "POST", headers: inSession, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });

    const cut = new AbortController();
    const handlerSignal = nextSlowCall();
    const call = fetch(served.url, {
      method: "POST",
      headers: inSession,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "slow", arguments: {} } }),
      signal: cut.signal,
    }).then((response) => response.text());
    const signal = await handlerSignal;
    cut.abort();
    await call.catch(() => {});
    await expect.poll(() => signal.aborted).toBe(true);
    await expect.poll(() => mcp.stats.cancelled).toBe(1);
  });
});

describe("createMcpServer in a spec's outbound service", () => {
  // As an author's vitest config answers it: no HTTP server, each request handed to `handle`.
  const mcp = createMcpServer({
    name: "weather",
    tools: [
      {
        name: "forecast",
        description: "Tomorrow's weather for a city.",
        inputSchema: z.object({ city: z.string() }),
        handler: async ({ city }, { progress }) => {
          await progress(1, { total: 2, message: `looking ${city} up` });
          await progress(2, { total: 2 });
          return `sunny in ${city}`;
        },
      },
      {
        name: "outage",
        description: "Throws, as a backend that is down.",
        handler: () => {
          throw new Error("the weather service is down");
        },
      },
    ],
  });
  const connect = () => connectMcp("https://weather-mcp.test/mcp", { fetch: (input, init) => mcp.handle(new Request(input, init)) });

  it("reports progress to a client that asked for it, then answers", async () => {
    const client = await connect();
    const seen = [];
    const result = await client.callTool({ name: "forecast", arguments: { city: "Paris" } }, { onprogress: (p) => seen.push(p) });
    expect(textOf(result)).toBe("sunny in Paris");
    expect(seen).toEqual([
      { progress: 1, total: 2, message: "looking Paris up" },
      { progress: 2, total: 2 },
    ]);
    // Without a progress token, progress is not sent: the call answers all the same.
    expect(textOf(await client.callTool({ name: "forecast", arguments: { city: "Oslo" } }))).toBe("sunny in Oslo");
    await client.close();
  });

  it("answers a tool that throws as a tool error carrying its message, and the session goes on", async () => {
    const client = await connect();
    expect(await client.callTool({ name: "outage", arguments: {} })).toEqual({
      isError: true,
      content: [{ type: "text", text: "the weather service is down" }],
    });
    expect(textOf(await client.callTool({ name: "forecast", arguments: { city: "Rome" } }))).toBe("sunny in Rome");
    await client.close();
  });
});

describe("serveMcp and the Node adapter", () => {
  it("answers at its path on loopback only: another Host is refused, another path is 404", async () => {
    const served = await serveMcp({ handle: async () => new Response("reached") }, { port: 0, path: "/mcp" });
    try {
      expect(served.url).toBe(`${served.origin}/mcp`);
      expect(await (await fetch(served.url, { method: "POST" })).text()).toBe("reached");
      expect((await fetch(`${served.origin}/other`, { method: "POST" })).status).toBe(404);
      const status = await new Promise((resolve, reject) => {
        const req = httpRequest(served.url, { method: "POST", headers: { Host: "attacker.example" } }, (res) => {
          res.resume();
          resolve(res.statusCode);
        });
        req.on("error", reject);
        req.end();
      });
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).not.toBe(404);
    } finally {
      await served.close();
    }
  });

  it("streams a body as it is written (an SSE answer's first event arrives before the last is made), and streams the request's body in", async () => {
    /** @type {(value?: unknown) => void} */
    let release = () => {};
    const held = new Promise((resolve) => (release = resolve));
    const server = createServer(
      nodeListener(async (request) => {
        const sent = await request.text();
        const encoder = new TextEncoder();
        const body = new ReadableStream({
          async start(controller) {
            controller.enqueue(encoder.encode(`data: first ${sent}\n\n`));
            await held;
            controller.enqueue(encoder.encode("data: second\n\n"));
            controller.close();
          },
        });
        return new Response(body, { headers: { "Content-Type": "text/event-stream", "Set-Cookie": "a=1" } });
      }),
    );
    const port = await listen(server, 0, "the adapter test", "");
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "hello" });
      expect(response.headers.get("content-type")).toBe("text/event-stream");
      expect(response.headers.getSetCookie()).toEqual(["a=1"]);
      const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes("first")) text += (await reader.read()).value ?? "";
      expect(text).toBe("data: first hello\n\n");
      release();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
      expect(text).toBe("data: first hello\n\ndata: second\n\n");
    } finally {
      release();
      await closeServer(server);
    }
  });
});
