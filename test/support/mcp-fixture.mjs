// MCP servers for the workerd specs, answered in the Node realm: the pool's
// outboundService (vitest.config.ts) hands this every request to the hosts
// below before the cassette recorder sees it, so MCP traffic is never
// recorded and never leaves the machine. Built on the MCP server authors' specs
// use (`createMcpServer` of @dynamicagents/core/testing/node): real sessions,
// real 404s after a drop.
//
//   https://mcp.test/<key>/mcp       server <key>'s streamable-HTTP endpoint; each key has its own sessions and counters
//   POST https://mcp.test/<key>/__drop   forgets the key's sessions (a restart): the client's next request gets 404
//   GET  https://mcp.test/<key>/__stats  {"calls":{<tool>:n},"cancelled":n,"sessions":n,"open":n,"lastAuthorized":bool}:
//                                    calls per tool (each listed, 0 until called), calls cancelled, sessions
//                                    initialized so far (a reconnect after __drop adds one), sessions open now
//                                    (a client's close ends its own), and whether the key's latest MCP request
//                                    carried the bearer token
//   https://mcp-down.test/…          always 503, as a server out of reach behind a gateway
//   https://mcp-slow.test/…          answers nothing (initialize included) for 12 s, then 503
//
// Tools on every key: lookup({term}) → "found: <term>"; fails({}) → a tool
// error (isError) "lookup backend exploded"; slow({}) → waits until the call
// is cancelled (at most 30 s; each cancellation counted); leak({}) → text
// holding a canary (for the redaction specs); steps({n}) → "took <n> steps", after a
// progress notification per step (when the call asked for them); whoami({}) → {authorized}
// whether the call carried `Authorization: Bearer <the MCP_TOKEN canary>`,
// never the header itself. Results of about 3 MB, each past any cap: huge_structured({}) →
// structuredContent of 30,000 rows; huge_blocks({}) → three text blocks of 1 MB; many_blocks({})
// → 50,000 small text blocks and an image; straddle({}) → text whose 40-`Q` secrets (STRADDLE_SECRET)
// fill the stretch from character 60,000 to 101,000, where a 64 KiB cap cuts.
import { z } from "zod";
import { createMcpServer } from "../../src/testing/node/mcp-server.ts";

// Built from parts, so that no line here is itself a canary (scripts/check/canaries.mjs reads the test run's output).
const TOKEN = ["canary", "secret", "mcp", "token", "4b8e"].join("-");
const LEAKED = ["canary", "secret", "mcp", "leak", "9c2f"].join("-");
/** The secret of `straddle`'s text: a redactor must replace every copy before any cut reaches one. */
const STRADDLE_SECRET = "Q".repeat(40);
const MB = 1024 * 1024;
const filler = (chars) => "lorem ipsum dolor sit amet ".repeat(Math.ceil(chars / 27)).slice(0, chars);
const SLOW_CAP_MS = 30_000;
const SLOW_INITIALIZE_MS = 12_000;
const ENDPOINT = /^\/([A-Za-z0-9_-]+)\/(mcp|__drop|__stats)$/;

/** The hosts this answers; every other request goes on to the recorder. */
const HOSTS = new Set(["mcp.test", "mcp-down.test", "mcp-slow.test"]);

const authorized = (request) => request?.headers.get("authorization") === `Bearer ${TOKEN}`;

/** Resolves after `ms`, or at once when `signal` aborts; never holds the test process open. */
function wait(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve("elapsed"), ms);
    timer.unref?.();
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve("aborted");
      },
      { once: true },
    );
  });
}

/** @type {import("../../src/testing/node/mcp-server.ts").McpTool[]} */
const TOOLS = [
  { name: "lookup", description: "Looks a term up.", inputSchema: z.object({ term: z.string() }), handler: ({ term }) => `found: ${term}` },
  {
    name: "fails",
    description: "Always fails, as a tool whose backend broke.",
    handler: () => ({ isError: true, content: [{ type: "text", text: "lookup backend exploded" }] }),
  },
  {
    name: "slow",
    description: "Takes as long as the caller lets it.",
    handler: async (_args, { signal }) => ((await wait(SLOW_CAP_MS, signal)) === "aborted" ? "cancelled" : "gave up waiting after 30 s"),
  },
  { name: "leak", description: "Returns a secret it should not.", handler: () => `the backend said: ${LEAKED}` },
  {
    name: "steps",
    description: "Takes `n` steps, telling the client how far it got after each.",
    inputSchema: z.object({ n: z.number().int().min(1).max(50) }),
    handler: async ({ n }, { progress }) => {
      for (let step = 1; step <= n; step++) {
        await progress(step, { total: n, message: `step ${step} of ${n}` });
        await wait(60);
      }
      return `took ${n} steps`;
    },
  },
  {
    name: "whoami",
    description: "Says whether the call carried the expected bearer token.",
    handler: (_args, { request }) => {
      const result = { authorized: authorized(request) };
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    },
  },
  {
    name: "huge_structured",
    description: "Returns about 3 MB of structured content.",
    handler: () => ({
      content: [{ type: "text", text: "30000 rows" }],
      structuredContent: { rows: Array.from({ length: 30_000 }, (_, id) => ({ id, text: filler(90) })) },
    }),
  },
  {
    name: "huge_blocks",
    description: "Returns three text blocks of 1 MB each.",
    handler: () => ({ content: [1, 2, 3].map((n) => ({ type: "text", text: `block ${n}: ${filler(MB)}` })) }),
  },
  {
    name: "many_blocks",
    description: "Returns 50,000 small text blocks and an image.",
    handler: () => ({
      content: [
        ...Array.from({ length: 50_000 }, (_, n) => ({ type: /** @type {const} */ ("text"), text: `block ${n}: ${filler(50)}` })),
        { type: /** @type {const} */ ("image"), mimeType: "image/png", data: "iVBORw0KGgo=" },
      ],
    }),
  },
  {
    name: "straddle",
    description: "Returns 3 MB of text with secrets where a cap cuts it.",
    handler: () => `${filler(60_000)}${`${STRADDLE_SECRET} `.repeat(1_000)}${filler(3 * MB)}`,
  },
];

/** The fixture: one MCP server per key, made on first use. */
export function createMcpFixture() {
  /** @type {Map<string, { mcp: ReturnType<typeof createMcpServer>, lastAuthorized: boolean }>} */
  const servers = new Map();
  const serverOf = (key) => {
    let server = servers.get(key);
    if (!server) servers.set(key, (server = { mcp: createMcpServer({ name: key, tools: TOOLS }), lastAuthorized: false }));
    return server;
  };

  /**
   * This fixture's answer to `request`, or undefined when it is not for one of its hosts.
   * @param {Request} request
   * @returns {Promise<Response> | undefined}
   */
  function answer(request) {
    const url = new URL(request.url);
    if (url.protocol !== "https:" || !HOSTS.has(url.hostname)) return undefined;
    return route(url, request);
  }

  /** @param {URL} url @param {Request} request */
  async function route(url, request) {
    if (url.hostname === "mcp-down.test") return new Response("mcp-down.test is unreachable", { status: 503 });
    if (url.hostname === "mcp-slow.test") {
      await wait(SLOW_INITIALIZE_MS, request.signal);
      return new Response("mcp-slow.test timed out", { status: 503 });
    }
    const match = ENDPOINT.exec(url.pathname);
    if (!match) return new Response(`no fixture route ${url.pathname}: use /<key>/mcp, /<key>/__drop or /<key>/__stats`, { status: 404 });
    const [, key, what] = /** @type {string[]} */ (match);
    const server = serverOf(key);
    if (what === "mcp") {
      server.lastAuthorized = authorized(request);
      return server.mcp.handle(request);
    }
    if (what === "__drop" && request.method === "POST") return Response.json({ dropped: await server.mcp.dropSessions() });
    if (what === "__stats" && request.method === "GET") {
      const { calls, cancelled, sessionsOpened, sessions } = server.mcp.stats;
      const all = Object.fromEntries(TOOLS.map((t) => [t.name, calls[t.name] ?? 0]));
      return Response.json({ calls: all, cancelled, sessions: sessionsOpened, open: sessions, lastAuthorized: server.lastAuthorized });
    }
    return new Response(`${request.method} ${url.pathname}: POST __drop, GET __stats`, { status: 405 });
  }

  return { answer };
}
