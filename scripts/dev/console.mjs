// The dev console of `npm start`: a page on the dev gatekeeper's own loopback
// port (http://127.0.0.1:8790/console) that shows the tenants, your tasks by
// conversation, and each task's timeline from the platform's events, live.
// It acts only as the chat's identity and only through the real path: every
// list, task and answer is an A2A call with a token the gatekeeper mints
// (session.mjs), never a shortcut into the Worker.
//
//   GET  /console                 the page (console/index.html, page.js, page.css: no build, no CDN)
//   GET  /console/api/overview    tenants (each with its MCP servers' latest status), conversations and tasks
//                                 (ListTasks per tenant), recent events
//   GET  /console/api/task        ?tenant=&id=  one task (GetTask) with its waterfall, timeline and usage; 404 {gone: true}
//                                 for a task that is not there any more (erased, or past retention)
//   GET  /console/api/stream      server-sent events: each new event, as it is read off wrangler's output
//   POST /console/api/answer      {tenant, taskId, requestId, optionId?, text?}: SendMessage with a hitl/response part
//   POST /console/api/redeliver   {tenant, taskId}: CreateTaskPushNotificationConfig to this gatekeeper,
//                                 which has the task's dead letters delivered to it once
//
// Dev only, and guarded as a page on loopback must be: another site open in
// the same browser could otherwise drive it. Requests must name this
// gatekeeper's host (no DNS rebinding), and a POST must come from the page's
// own origin with a JSON body (a cross-site form cannot send one).
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { BodyTooLarge, readBody, sendJson } from "./http.mjs";
import { conversationsOf, deadLettersOf, taskDetail, taskSummary, timelineEntry, usageOf } from "./console-model.mjs";
import { RpcFailed, hitlRequestOf, hitlResponse } from "./session.mjs";

const CONSOLE_PATH = "/console";
const MAX_BODY = 64 * 1024;
const LIST_PAGE_SIZE = 100;
const KEEPALIVE_MS = 15_000;
/** @type {Map<string, { file: string, type: string }>} */
const ASSETS = new Map([
  [CONSOLE_PATH, { file: "index.html", type: "text/html; charset=utf-8" }],
  [`${CONSOLE_PATH}/`, { file: "index.html", type: "text/html; charset=utf-8" }],
  [`${CONSOLE_PATH}/page.js`, { file: "page.js", type: "text/javascript; charset=utf-8" }],
  [`${CONSOLE_PATH}/page.css`, { file: "page.css", type: "text/css; charset=utf-8" }],
]);
const ASSET_DIR = new URL("./console/", import.meta.url);
// The page runs its own script and styles only, and talks to this origin only.
const PAGE_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

/** A refusal the console answers with its own status (a bad request, a task no longer waiting). */
class ConsoleRefusal extends Error {
  name = "ConsoleRefusal";
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Mounts the console on the dev gatekeeper.
 * @param {{
 *   gatekeeper: { origin: string, pushUrl: string, events: import("node:events").EventEmitter, mount: (prefix: string, handler: (req: any, res: any, path: string) => any) => void,
 *     issueNotificationToken: (record: { agent: string, tenant: string, identityKey: string, messageId: string }) => string, bindNotificationToken: (token: string, taskId: string) => boolean },
 *   session: { identity: { key: string, name?: string }, agent: { origin: string }, call: (tenant: string, method: string, params?: Record<string, unknown>) => Promise<any> },
 *   tenants: { tenant: string, name?: string, description?: string }[],
 *   events: ReturnType<typeof import("./console-model.mjs").createEventLog>,
 * }} options
 */
export function serveConsole({ gatekeeper, session, tenants, events }) {
  const allowedHosts = new Set([new URL(gatekeeper.origin).host, `localhost:${new URL(gatekeeper.origin).port}`]);
  const tenantNames = new Set(tenants.map((t) => t.tenant));

  // What the gatekeeper itself sees joins the timelines: the pushes it verified and those it refused.
  const onPush = (push) => {
    if (push.identityKey === session.identity.key)
      events.note(
        "gatekeeper.push",
        { tenant: push.tenant, taskId: push.taskId },
        { kind: push.kind, state: push.state, ...(push.traceId ? { traceId: push.traceId } : {}) },
      );
  };
  const onRefused = (refusal) => events.note("gatekeeper.refused", {}, { check: refusal.check, message: refusal.message });
  gatekeeper.events.on("push", onPush);
  gatekeeper.events.on("refused", onRefused);

  /** @type {Set<() => void>} */
  const streams = new Set();

  async function handle(req, res, path) {
    const host = String(req.headers.host ?? "");
    if (!allowedHosts.has(host)) return sendJson(res, 421, { error: `the dev console answers at ${gatekeeper.origin}${CONSOLE_PATH} only` });
    try {
      if (req.method === "GET" || req.method === "HEAD") {
        const asset = ASSETS.get(path);
        if (asset) return await sendAsset(res, asset);
        const url = new URL(req.url ?? "/", gatekeeper.origin);
        if (path === `${CONSOLE_PATH}/api/overview`) return sendJson(res, 200, await overview(), PAGE_HEADERS);
        if (path === `${CONSOLE_PATH}/api/task`)
          return sendJson(res, 200, await task(knownTenant(url.searchParams.get("tenant")), url.searchParams.get("id")), PAGE_HEADERS);
        if (path === `${CONSOLE_PATH}/api/stream`) return stream(req, res);
      } else if (req.method === "POST") {
        const body = await postedJson(req, host);
        if (path === `${CONSOLE_PATH}/api/answer`) return sendJson(res, 200, await answer(body), PAGE_HEADERS);
        if (path === `${CONSOLE_PATH}/api/redeliver`) return sendJson(res, 200, await redeliver(body), PAGE_HEADERS);
      }
      return sendJson(res, 404, { error: `no console route for ${req.method} ${path}` });
    } catch (error) {
      // TaskNotFound: the task is gone (its context or its caller erased, or retention took it), not the console broken.
      if (error instanceof RpcFailed && error.code === -32001) return sendJson(res, 404, { error: error.message, gone: true }, PAGE_HEADERS);
      const status = error instanceof ConsoleRefusal ? error.status : 502;
      return sendJson(res, status, { error: error.message }, PAGE_HEADERS);
    }
  }
  gatekeeper.mount(CONSOLE_PATH, handle);

  async function sendAsset(res, { file, type }) {
    const body = await readFile(new URL(file, ASSET_DIR));
    res.writeHead(200, { "Content-Type": type, "Content-Length": body.length, ...PAGE_HEADERS });
    res.end(body);
  }

  /** A POST's JSON body, from the page itself: same origin, `application/json`. */
  async function postedJson(req, host) {
    if (req.headers.origin !== `http://${host}`) throw new ConsoleRefusal(403, "the console takes actions from its own page only");
    if (!/^application\/json\b/i.test(String(req.headers["content-type"] ?? ""))) throw new ConsoleRefusal(415, "send application/json");
    try {
      const body = JSON.parse(await readBody(req, MAX_BODY));
      if (body && typeof body === "object" && !Array.isArray(body)) return body;
    } catch (error) {
      if (error instanceof BodyTooLarge) throw new ConsoleRefusal(413, error.message);
    }
    throw new ConsoleRefusal(400, "the body must be a JSON object");
  }

  function knownTenant(name) {
    if (typeof name !== "string" || !tenantNames.has(name)) throw new ConsoleRefusal(400, `tenant must be one of ${[...tenantNames].join(", ")}`);
    return name;
  }

  function taskIdOf(value) {
    if (typeof value !== "string" || value === "") throw new ConsoleRefusal(400, "a task id is required");
    return value;
  }

  async function overview() {
    const lists = await Promise.all(
      tenants.map(async ({ tenant }) => {
        try {
          const page = await session.call(tenant, "ListTasks", { pageSize: LIST_PAGE_SIZE });
          return { tenant, tasks: (page?.tasks ?? []).map((t) => taskSummary(tenant, t)), total: Number(page?.totalSize ?? 0) };
        } catch (error) {
          return { tenant, tasks: [], total: 0, error: error.message };
        }
      }),
    );
    const tasks = lists.flatMap((l) => l.tasks).map((t) => ({ ...t, usage: usageOf(events.forTask(t.id)) }));
    const servers = events.mcpServers();
    return {
      identity: { key: session.identity.key, name: session.identity.name },
      agent: session.agent.origin,
      tenants: tenants.map((t) => {
        const list = lists.find((l) => l.tenant === t.tenant);
        const mcp = servers.filter((s) => s.tenant === t.tenant).map(({ tenant: _tenant, ...status }) => status);
        return { ...t, total: list?.total ?? 0, ...(list?.error ? { error: list.error } : {}), mcp };
      }),
      conversations: conversationsOf(tasks),
      recent: events.recent(60).map(timelineEntry),
      eventsSeen: events.size,
    };
  }

  async function task(tenant, id) {
    const taskId = taskIdOf(id);
    const found = await session.call(tenant, "GetTask", { id: taskId });
    return taskDetail(tenant, found, events.forTask(taskId));
  }

  /** Answers the request the task waits on, as its caller: SendMessage on the task, a hitl/response part. */
  async function answer(body) {
    const tenant = knownTenant(body.tenant);
    const taskId = taskIdOf(body.taskId);
    const optionId = typeof body.optionId === "string" && body.optionId !== "" ? body.optionId : undefined;
    const text = typeof body.text === "string" && body.text.trim() !== "" ? body.text.trim() : undefined;
    if (!optionId && !text) throw new ConsoleRefusal(400, "an answer needs an option or some text");
    const current = await session.call(tenant, "GetTask", { id: taskId });
    const request = current?.status?.state === "TASK_STATE_INPUT_REQUIRED" ? hitlRequestOf(current.status.message) : undefined;
    if (!request || (body.requestId && request.requestId !== body.requestId))
      throw new ConsoleRefusal(409, "the task no longer waits on that request (answered already, or expired): reload it");
    const result = await session.call(tenant, "SendMessage", {
      message: {
        messageId: randomUUID(),
        role: "ROLE_USER",
        taskId,
        contextId: current.contextId,
        parts: [{ data: hitlResponse(request.requestId, { optionId, text }) }],
      },
      configuration: { returnImmediately: true },
    });
    events.note("console.answered", { tenant, taskId }, { requestId: request.requestId ?? "", ...(optionId ? { optionId } : {}), ...(text ? { text } : {}) });
    return { state: result?.task?.status?.state };
  }

  /**
   * Sets a push config on the task pointing back at this gatekeeper, with a
   * notification token of its own: the platform then delivers each of the
   * task's dead-lettered events to it once (docs/gatekeeper.md "Dead letters
   * and re-delivery"), and the chat and the timeline show them as they land.
   */
  async function redeliver(body) {
    const tenant = knownTenant(body.tenant);
    const taskId = taskIdOf(body.taskId);
    const current = await session.call(tenant, "GetTask", { id: taskId });
    if (deadLettersOf(current).length === 0) throw new ConsoleRefusal(409, "the task has no dead letters (delivered meanwhile?): reload it");
    const configId = `console-${randomUUID().slice(0, 8)}`;
    const token = gatekeeper.issueNotificationToken({
      agent: session.agent.origin,
      tenant,
      identityKey: session.identity.key,
      messageId: `console-redeliver-${configId}`,
    });
    gatekeeper.bindNotificationToken(token, taskId);
    await session.call(tenant, "CreateTaskPushNotificationConfig", { taskId, id: configId, url: gatekeeper.pushUrl, token });
    events.note("console.redeliver", { tenant, taskId }, { configId });
    return { configId };
  }

  /** Each new event as one SSE message, for as long as the page stays open. */
  function stream(req, res) {
    res.writeHead(200, { "Content-Type": "text/event-stream", ...PAGE_HEADERS });
    res.write("retry: 2000\n\n");
    const unsubscribe = events.subscribe((event) => res.write(`data: ${JSON.stringify(timelineEntry(event))}\n\n`));
    const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
    const stop = () => {
      clearInterval(keepalive);
      unsubscribe();
      streams.delete(stop);
    };
    streams.add(stop);
    req.on("close", stop);
  }

  return {
    url: `${gatekeeper.origin}${CONSOLE_PATH}`,
    /** Stops listening; the gatekeeper's close ends the open streams' connections. */
    close() {
      gatekeeper.events.off("push", onPush);
      gatekeeper.events.off("refused", onRefused);
      for (const stop of [...streams]) stop();
    },
  };
}
