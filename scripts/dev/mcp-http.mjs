// An MCP server on loopback: the server itself (sessions, tools as plain
// definitions) is the one specs use, `createMcpServer` of
// @dynamicagents/core/testing/node (src/testing/node/mcp-server.ts); this
// serves it over a Node `http` listener that streams its answers, for
// `npm start`'s dev tools (mcp-devtools.mjs).
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { hostHeaderValidationResponse, localhostAllowedHostnames } from "@modelcontextprotocol/server";
import { closeServer, listen } from "./http.mjs";

/**
 * A Node `http` request listener for a fetch-style handler: IncomingMessage →
 * Request (the body streamed, the signal aborted when the client goes away)
 * and Response → ServerResponse (the body written as it comes, so an SSE
 * answer reaches the client event by event).
 * @param {(request: Request) => Promise<Response>} handle
 * @returns {(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void}
 */
export function nodeListener(handle) {
  return (req, res) => {
    const aborted = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) aborted.abort();
    });
    respond(handle, toRequest(req, aborted.signal), res, aborted.signal).catch(() => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" }).end("the MCP server failed");
      else res.destroy();
    });
  };
}

/** @param {import("node:http").IncomingMessage} req @param {AbortSignal} signal */
function toRequest(req, signal) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(url, {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: /** @type {any} */ (Readable.toWeb(req)), duplex: "half" } : {}),
  });
}

/**
 * @param {(request: Request) => Promise<Response>} handle
 * @param {Request} request
 * @param {import("node:http").ServerResponse} res
 * @param {AbortSignal} signal
 */
async function respond(handle, request, res, signal) {
  const response = await handle(request);
  /** @type {Record<string, string | string[]>} */
  const headers = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  // Headers go out now: an SSE client waits on them before the first event.
  res.flushHeaders();
  const reader = response.body.getReader();
  signal.addEventListener("abort", () => void reader.cancel().catch(() => {}), { once: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise((resolve) => res.once("drain", resolve));
  }
  res.end();
}

/**
 * Serves `mcp` on 127.0.0.1:`port` (0 for any free port) at `path`, for
 * loopback callers only: a Host other than a loopback name is refused (the
 * SDK's check), so a web page cannot reach it through DNS rebinding.
 * @param {{ handle: (request: Request) => Promise<Response> }} mcp
 * @param {{ port: number, path?: string, what?: string, portHint?: string }} options
 */
export async function serveMcp(mcp, { port, path = "/mcp", what = "the dev MCP server", portHint = "choose another port" }) {
  const loopback = localhostAllowedHostnames();
  const listener = nodeListener(async (request) => {
    const refused = hostHeaderValidationResponse(request, loopback);
    if (refused) return refused;
    if (new URL(request.url).pathname !== path) return new Response(`no MCP endpoint here: it is at ${path}`, { status: 404 });
    return mcp.handle(request);
  });
  const server = createServer(listener);
  const bound = await listen(server, port, what, portHint);
  const origin = `http://127.0.0.1:${bound}`;
  return { port: bound, origin, url: `${origin}${path}`, close: () => closeServer(server) };
}
