import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { exportJWK, generateKeyPair } from "jose";
import { JWKS_PATH, MAX_TOKEN_LIFETIME_SECONDS } from "../../src/a2a/wire.ts";
import { makeGatekeeperToken } from "../../src/testing/gatekeeper-token.ts";
import { NOTIFY_PATH } from "../../scripts/dev/gatekeeper.mjs";
import { BodyTooLarge, closeServer, listen, readBody } from "../../scripts/dev/http.mjs";
import { chatCompletionBody, chatCompletionEvents } from "../../src/testing/chat-completion.ts";

export const TENANT = "assistant";
const MAX_BODY = 1024 * 1024;
/**
 * How long a bench token lives: as long as the edge accepts (it refuses one
 * whose `exp` is more than MAX_TOKEN_LIFETIME_SECONDS ahead), less a minute
 * so that the two clocks never disagree about it.
 */
const TOKEN_TTL_S = MAX_TOKEN_LIFETIME_SECONDS - 60;
/** A caller's token is minted again once it has less than this left: a run can outlast any one token. */
const RENEW_BEFORE_S = 300;
/**
 * How a measured turn's user text names it, so its model request can be
 * matched to it (see turns.mjs). A request carries the caller's whole
 * conversation, so the turn's own tag is the last one in it.
 */
const TURN_TAG = /bench-turn ([0-9a-z]+-[0-9]+)/g;
const lastTag = (body) => [...body.matchAll(TURN_TAG)].at(-1)?.[1];
/**
 * What the fake model answers a compaction's summary request with: plain
 * prose of about the size the agent asks for (at most 300 words), naming no
 * turn, so that no later request's tag is ever a summary's. Each summary
 * has a number (SUMMARY_ID), so a later request shows which one it carries:
 * a turn's, in its window, once the compaction that asked for it has folded.
 * @param {number} id
 */
const summaryText = (id) =>
  `Summary bench-summary-${id}, written by the bench's fake model. ${"The user sent numbered bench turns and each was answered with a short acknowledgement; nothing else was decided or asked. ".repeat(12)}`.trim();
const SUMMARY_ID = /bench-summary-([0-9]+)/g;
/** The newest summary a request carries (a turn's window, a summary's transcript), or undefined. */
const carriedSummary = (body) => {
  const ids = [...body.matchAll(SUMMARY_ID)].map((m) => Number(m[1]));
  return ids.length ? Math.max(...ids) : undefined;
};

/**
 * The bench's own gatekeeper: a loopback HTTP server that publishes its JWKS
 * (which the Worker fetches to verify our tokens), accepts push notifications,
 * and answers OpenAI-style chat completions so that a turn, should one run,
 * never leaves the machine. The model answers at once: nothing it does waits.
 * It counts what it serves: the JWKS count shows whether the edge caches keys,
 * the rest shows background traffic that could disturb a measurement.
 * Observers (`observe`) see each model call and push with its timestamps
 * (`performance.now()` of this process), which is how turns are timed.
 *
 * `answerModel` and `answerPush` replace the default answers (lib/kill-under-load.mjs
 * injects failures and plays a tool-calling model with them):
 * `answerModel(body)` returns the HTTP status and JSON text of a completion,
 * `answerPush({ url, headers, body })` the status a push is answered with.
 * `holdModel(body)`, when it returns true, leaves that model request unanswered
 * (until the Worker's process dies or the gatekeeper closes): a model call the
 * Worker is killed during (test/node/e2e/hitl-restart.e2e.mjs).
 * @param {{ answerModel?: (body: string) => { status: number, body: string }, answerPush?: (push: { url: URL, headers: import("node:http").IncomingHttpHeaders, body: string }) => number,
 *   holdModel?: (body: string) => boolean }} [options]
 */
export async function startGatekeeper({ answerModel, answerPush, holdModel } = {}) {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const kid = `bench-gatekeeper-${Date.now()}`;
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: "EdDSA", use: "sig" }] });
  // `oversized`: requests dropped for a body over MAX_BODY (a model request among them is in `completions` too).
  const counts = { jwks: 0, notifications: 0, completions: 0, other: 0, oversized: 0, summaries: 0 };
  const observers = new Set();
  /** When each JWKS fetch came (ISO): a burst says which part of the run missed the cache. */
  const jwksFetchedAt = [];

  const server = createServer((req, res) => handle(req, res, { jwks, counts, observers, jwksFetchedAt, answerModel, answerPush, holdModel }));
  server.keepAliveTimeout = 30_000;
  const port = await listen(server, 0, "the bench gatekeeper", "");

  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    counts,
    jwksFetchedAt,
    /** Requests a running turn makes (model calls and pushes): background work that competes with the measured requests. */
    turnTraffic: () => counts.notifications + counts.completions,
    pushUrl: `${origin}${NOTIFY_PATH}`,
    modelBaseUrl: `${origin}/v1`,
    /** A trivial endpoint: the cost of a loopback HTTP round trip itself, with no workerd in the way. */
    pingUrl: `${origin}/ping`,
    /**
     * The token of one caller (an identity key) of the agent at `audience`,
     * as a function: minted once and reused for every call, since minting is
     * not what is measured, and minted again when it has less than
     * RENEW_BEFORE_S left (once every 55 minutes, a few tens of microseconds).
     * @param {string} audience
     * @param {string} identityKey
     * @returns {() => Promise<string>}
     */
    tokenFor: (audience, identityKey) => {
      /** @type {Promise<string> | undefined} */
      let token;
      let expiresAt = 0;
      return () => {
        const now = Date.now();
        if (!token || now / 1000 > expiresAt - RENEW_BEFORE_S) {
          expiresAt = Math.floor(now / 1000) + TOKEN_TTL_S;
          token = makeGatekeeperToken({
            key: { kid, privateKey },
            gatekeeper: origin,
            endpoint: audience,
            tenant: TENANT,
            identity: { key: identityKey, kind: "user" },
            now,
            expiresIn: TOKEN_TTL_S,
          });
        }
        return token;
      };
    },
    /**
     * Calls `observer.onModel({tag, t2, read, t3, bytes, messages, summary,
     * summaryId, carries})` for every model call (t2: its request's headers reached this server,
     * read: its body had too, t3: the reply was handed to the kernel; `tag`
     * from TURN_TAG, or undefined; `bytes` of the request body; `messages` in
     * it, the system prompt included; `summary`: a compaction's summary
     * request, see `isSummaryRequest`, whose `tag` is undefined, and
     * `summaryId` the number of the summary it is answered with; `carries`:
     * the newest summary number in the request, see `summaryText`) and `observer.onPush({url, headers,
     * body, t4, status})` for every push (t4: its body had fully arrived;
     * status: what it was answered). Returns the function that stops it.
     */
    observe: (observer) => {
      observers.add(observer);
      return () => observers.delete(observer);
    },
    close: () => closeServer(server),
  };
}

function handle(req, res, { jwks, counts, observers, jwksFetchedAt, answerModel, answerPush, holdModel }) {
  const arrived = performance.now();
  const url = new URL(req.url, "http://x");
  const path = url.pathname;
  if (req.method === "GET" && path === "/ping") return reply(res, 200, "{}");
  if (req.method === "GET" && path === JWKS_PATH) {
    counts.jwks++;
    jwksFetchedAt.push(new Date().toISOString());
    return reply(res, 200, jwks);
  }
  if (req.method === "POST" && path === NOTIFY_PATH) {
    counts.notifications++;
    return withBody(req, counts, (body) => {
      const t4 = performance.now();
      const status = answerPush?.({ url, headers: req.headers, body }) ?? 200;
      reply(res, status, status === 200 ? "{}" : JSON.stringify({ error: "unavailable" }));
      for (const o of observers) o.onPush?.({ url, headers: req.headers, body, t4, status });
    });
  }
  if (req.method === "POST" && path === "/v1/chat/completions") {
    counts.completions++;
    return withBody(req, counts, (body) => {
      const read = performance.now();
      if (holdModel?.(body)) return;
      const request = parseJson(body);
      const summary = isSummaryRequest(request);
      // A summary's transcript carries the tags of the turns it folds: none of them is its own.
      const tag = summary ? undefined : lastTag(body);
      // Zero latency: the reply goes out as soon as the request is read. It
      // names the turn, so a push can be checked to carry this very answer.
      const summaryId = summary ? ++counts.summaries : undefined;
      const carries = carriedSummary(body);
      const answer = answerModel?.(body) ?? { status: 200, body: completion(summaryId ? summaryText(summaryId) : tag ? `ok ${tag}` : "ok") };
      // The agents stream their answers: a completion goes out as the events it streams as.
      const streamed = answer.status === 200 && request?.stream === true;
      const messages = Array.isArray(request?.messages) ? request.messages.length : 0;
      const sent = streamed ? chatCompletionEvents(JSON.parse(answer.body)) : answer.body;
      reply(
        res,
        answer.status,
        sent,
        () => {
          const t3 = performance.now();
          for (const o of observers) o.onModel?.({ tag, t2: arrived, read, t3, bytes: Buffer.byteLength(body), messages, summary, summaryId, carries });
        },
        streamed ? "text/event-stream" : "application/json",
      );
    });
  }
  counts.other++;
  return reply(res, 404, JSON.stringify({ error: "not_found" }));
}

/** Hands the request body, as text, to `done`; a body over MAX_BODY (a runaway sender; counted) or a broken one drops the connection. */
function withBody(req, counts, done) {
  readBody(req, MAX_BODY).then(done, (error) => {
    if (error instanceof BodyTooLarge) counts.oversized++;
    req.destroy();
  });
}

/** `written`, if given, runs once the reply has been handed to the kernel. */
function reply(res, status, body, written, contentType = "application/json") {
  res.writeHead(status, { "Content-Type": contentType, "Content-Length": Buffer.byteLength(body) });
  res.end(body, written);
}

/** A request body as JSON, or undefined when it is not JSON. @param {string} body */
function parseJson(body) {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/**
 * Whether a chat-completions request is a compaction's summary rather than a
 * turn's: `DynamicAgent.summarize` (src/host/dynamic-agent.ts) calls the model
 * with the agent's `messages.summarize` as its instructions (the system
 * message), one user message, the transcript (`compactConversation` in
 * src/round/conversation.ts: one JSON document a line, the previous summary's
 * and then the folded messages'), and no tools; a turn's request always
 * carries the agent's tools (the `assistant` has four).
 */
function isSummaryRequest(request) {
  const messages = request?.messages;
  if (!Array.isArray(messages) || messages.length !== 2 || (request.tools?.length ?? 0) > 0) return false;
  const [system, user] = messages;
  return system?.role === "system" && user?.role === "user" && typeof user.content === "string" && user.content.startsWith("{");
}

/** @param {string} content */
const completion = (content) => JSON.stringify(chatCompletionBody({ content }, "bench"));
