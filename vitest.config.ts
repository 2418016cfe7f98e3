import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { exportJWK, generateKeyPair } from "jose";
import { createServer, type AddressInfo } from "node:net";
import { resolve } from "node:path";
import { configDefaults, defineConfig, defineProject } from "vitest/config";
import { ROUND_RESULT_PATTERN } from "./src/a2a/wire.js";
import { chatCompletionBody, chatCompletionReply } from "./src/testing/chat-completion.js";
import { createVcr, recordFromEnv } from "./src/testing/node/index.js";
import { ConsoleFileReporter } from "./test/support/console-file.mjs";
import { createMcpFixture } from "./test/support/mcp-fixture.mjs";

// Offline (README "Offline"): miniflare would fetch `Request.cf` data from workers.cloudflare.com
// when the pool starts outside NODE_ENV=test; the specs read none of it.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

// A fresh card key per run: nothing secret is committed, and no test can come
// to depend on a particular key.
const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
const signingKey = JSON.stringify({ ...(await exportJWK(privateKey)), kid: "a2a-test" });

/**
 * What a cassette is recorded against (RECORD=1): the fake OpenAI-compatible
 * model at `https://model.test/v1/chat/completions`, which answers "echo:
 * <last user text>" (and, in a researcher's first round, delegates two
 * read_page subtasks), and pages at `http://pages.test`; anything else is
 * offline. To record against a real
 * endpoint instead, see cassettes/README.md.
 */
async function echoModelOrOffline(request: Request): Promise<Response> {
  if (request.method === "GET" && request.url.startsWith("http://pages.test/")) {
    return new Response(`<html><body><p>${new URL(request.url).pathname} says the answer is 42.</p></body></html>`);
  }
  if (request.method === "POST" && request.url === "https://model.test/v1/chat/completions") {
    const body = (await request.json()) as {
      model: string;
      messages: Array<{ role: string; content: unknown }>;
      tools?: Array<{ function: { name: string } }>;
      stream?: boolean;
    };
    const text = (m?: { content: unknown }) => String(m?.content ?? "");
    const last = [...body.messages].reverse().find((m) => m.role === "user");
    const delegating = (body.tools ?? []).some((t) => t.function.name === "delegate") && !body.messages.some((m) => ROUND_RESULT_PATTERN.test(text(m)));
    // A researcher's first round delegates two pages; everything else echoes.
    const reply = delegating
      ? {
          toolCalls: [
            {
              name: "delegate",
              arguments: { subtasks: [1, 2].map((n) => ({ type: "read_page", params: { url: `http://pages.test/page-${n}`, question: text(last) } })) },
            },
          ],
        }
      : { content: `echo: ${text(last).slice(0, 2000)}` };
    // Its usage as OpenAI's API reports it, details included: every message before the last a cached prefix, a few tokens of reasoning.
    const usage = { inputTokens: 10 * body.messages.length, outputTokens: 12, cachedInputTokens: 10 * (body.messages.length - 1), reasoningTokens: 4 };
    const answer = chatCompletionReply(chatCompletionBody({ ...reply, usage }, body.model), body.stream === true);
    return new Response(answer.body, { headers: { "Content-Type": answer.contentType } });
  }
  return new Response(`tests are offline: ${request.method} ${request.url}`, { status: 503 });
}

// Every fetch a spec's Worker makes that no in-isolate fake answered arrives
// here: replayed from cassettes/, or (RECORD=1) recorded. Nothing reaches a
// real network in a replaying run. One per project: it follows the cassette its specs name.
const newVcr = () =>
  createVcr({
    cassettesDir: resolve(import.meta.dirname, "cassettes"),
    record: recordFromEnv(),
    upstream: process.env.RECORD_MODEL_BASE_URL ? realModel(process.env.RECORD_MODEL_BASE_URL, process.env.RECORD_MODEL_API_KEY) : echoModelOrOffline,
  });

/** Recording against a real OpenAI-compatible endpoint: model.test is rewritten to it (cassettes/README.md). */
function realModel(baseUrl: string, apiKey: string | undefined) {
  return async (request: Request): Promise<Response> => {
    if (!request.url.startsWith("https://model.test/v1/")) return echoModelOrOffline(request);
    const headers = new Headers(request.headers);
    if (apiKey) headers.set("authorization", `Bearer ${apiKey}`);
    return fetch(request.url.replace("https://model.test/v1", baseUrl.replace(/\/$/, "")), { method: request.method, headers, body: await request.text() });
  };
}

/** A TCP server on loopback that closes each connection once the request arrives, unanswered; its address. */
async function connectionDropper(): Promise<string> {
  const server = createServer((socket) => socket.once("data", () => socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // Never what keeps the test process alive.
  server.unref();
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The far end that drops every connection (below), one for every pool. */
const dropperAddress = await connectionDropper();

/**
 * A project of specs inside real workerd, each spec file against the same Worker; `bindings`
 * replace the specs' own variables (below) for this project.
 */
function workerdProject(name: string, include: string[], exclude: string[], bindings: Record<string, string> = {}) {
  const vcr = newVcr();
  // The specs' MCP servers (https://mcp.test/<key>/mcp, mcp-down.test, mcp-slow.test), answered
  // before the recorder: MCP traffic is never recorded, nor replayed from a cassette.
  const mcpFixture = createMcpFixture();
  return defineProject({
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.jsonc" },
        // The reference Worker plus the specs' own agents (test/support/worker.ts).
        main: "./test/support/worker.ts",
        // The AI binding is remote-only; tests fake the model instead.
        remoteBindings: false,
        // Subagents are facets: exported from the Worker, made by the runtime, never bound.
        additionalExports: { ResearchSubagent: "DurableObject", MarkerSubagent: "DurableObject" },
        miniflare: {
          durableObjects: {
            MARKER_AGENT: { className: "MarkerAgent", useSQLite: true },
            MARKER_RESEARCHER: { className: "MarkerResearcher", useSQLite: true },
            // Its subagent class, UnlistedSubagent, is left out of additionalExports on purpose (test/subagent-exports.spec.ts).
            MARKER_UNLISTED: { className: "UnlistedResearcher", useSQLite: true },
            MARKER_BROKEN: { className: "BrokenAgent", useSQLite: true },
            MARKER_OBSERVED: { className: "ObservedAgent", useSQLite: true },
            MARKER_MCP: { className: "McpMarkerAgent", useSQLite: true },
            MARKER_TWO_LINES: { className: "TwoLinesAgent", useSQLite: true },
          },
          workflows: { MARKER_WORKFLOW: { name: "marker-turn", className: "MarkerTurnWorkflow" } },
          // A real rate-limiting binding, which the specs hand to an edge of their own (test/rate-limit.spec.ts).
          ratelimits: { TEST_RATE_LIMITER: { namespace_id: "1001", simple: { limit: 3, period: 60 } } },
          bindings: {
            A2A_SIGNING_KEY: signingKey,
            // Canaries: secrets no output may ever hold (scripts/check/canaries.mjs reads
            // the whole run's output in CI). The model key goes out with every model call;
            // the broken agent's secret is refused by a check that quotes it (test/support/agents.ts).
            OPENAI_API_KEY: "canary-secret-7f3a9c",
            SPEC_BROKEN_SECRET: "canary-secret-b2e4d1",
            GATEKEEPER_ORIGINS: JSON.stringify(["https://gatekeeper.test", "https://other-gatekeeper.test", "http://127.0.0.1:9999"]),
            // The model is outside the system: specs answer these calls themselves.
            OPENAI_BASE_URL: "https://model.test/v1",
            OPENAI_MODEL: "primary-model",
            OPENAI_FALLBACK_MODEL: "fallback-model",
            // developers.cloudflare.com is faked inside workerd by the round specs;
            // pages.test is served by the recorder's upstream (cassettes).
            FETCH_ALLOWLIST: JSON.stringify(["https://developers.cloudflare.com", "http://pages.test"]),
            // The reference's `conformance` tenant is served, so specs that walk every tenant
            // (cards) cover it too; test/conformance.spec.ts switches it off per edge.
            CONFORMANCE: "1",
            // A canary: the observed agent's plugin secret, which no event or log line may carry (test/telemetry.spec.ts).
            OBSERVED_SECRET: "canary-secret-observed-5d1e7a",
            // A canary: the bearer token of the MCP fixture's servers (test/support/mcp-fixture.mjs: whoami checks it).
            MCP_TOKEN: "canary-secret-mcp-token-4b8e",
            ...bindings,
          },
          outboundService: (request: Request) => mcpFixture.answer(request) ?? vcr.outboundService(request),
          // A far end that closes every connection before answering, as a model endpoint that dropped a
          // keep-alive connection: the specs get the runtime's own error for it (test/support/outbound.ts).
          serviceBindings: { CONNECTION_DROPPER: { external: { address: dropperAddress, http: {} } } },
        },
      }),
    ],
    test: { name, include, exclude: [...configDefaults.exclude, ...exclude] },
  });
}

// The specs, inside real workerd.
const workerd = workerdProject("workerd", ["test/**/*.spec.ts"], ["test/clock/**"]);

// Test clocks (docs/gatekeeper.md "Test clocks") are honoured only while every gatekeeper is on
// loopback: their specs run against a Worker of their own whose gatekeepers are, with every clock
// short enough to watch a push given up, a question expire and a removed key refused in seconds.
const clocked = workerdProject("test-clock", ["test/clock/**/*.spec.ts"], [], {
  GATEKEEPER_ORIGINS: JSON.stringify(["http://127.0.0.1:9999", "http://localhost:9999"]),
  TEST_CLOCK_PUSH_FIRST_RETRY_MS: "100",
  TEST_CLOCK_PUSH_MAX_WAIT_MS: "200",
  TEST_CLOCK_PUSH_WINDOW_MS: "1500",
  TEST_CLOCK_QUESTION_EXPIRY_MS: "1500",
  TEST_CLOCK_DEAD_LETTER_RETENTION_MS: "1000",
  TEST_CLOCK_GATEKEEPER_JWKS_MAX_AGE_MS: "1000",
});

// `vitest run` runs every project: the specs inside workerd (and the test clocks' Worker), and the Node-realm
// tests of what runs on a developer's machine (scripts/dev: the dev gatekeeper,
// the stand-in model). The end-to-end run of `npm start` is `npm run test:e2e`.
// A test's console lines are printed only when it fails, so a failure is not buried under every
// passing spec's event lines; all of them also go to TEST_CONSOLE_FILE (default
// .test-output/console.log), which the canary check reads in CI (.ci/run).
const TEST_CONSOLE_FILE = resolve(import.meta.dirname, process.env.TEST_CONSOLE_FILE ?? ".test-output/console.log");

export default defineConfig({
  test: {
    silent: "passed-only",
    reporters: ["default", new ConsoleFileReporter(TEST_CONSOLE_FILE)],
    projects: [
      workerd,
      clocked,
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.mjs"],
        },
      },
    ],
  },
});
