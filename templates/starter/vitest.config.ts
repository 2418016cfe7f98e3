import { generateKeyPairSync } from "node:crypto";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { createMcpServer, createVcr, recordFromEnv, type McpTool } from "@dynamicagents/core/testing/node";
import { defineConfig } from "vitest/config";

// Offline (README "Offline"): miniflare would fetch `Request.cf` data from workers.cloudflare.com
// when the pool starts outside NODE_ENV=test; the specs read none of it.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

// A fresh card key per run: nothing secret is committed, and no spec can come to depend on one key.
const signingKey = JSON.stringify({ ...generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }), kid: "a2a-test" });

// Every request a spec's Worker makes that the spec did not answer itself: replayed from cassettes/
// (a spec that calls setupRecording()), recorded with RECORD=1, otherwise refused. Specs stay offline.
const vcr = createVcr({ cassettesDir: "cassettes", record: recordFromEnv() });

/** An MCP server for the specs at https://NAME-mcp.test/mcp (createMcpServer: tools as plain functions), its tools trusted. */
const testMcpServer = (name: string, tools: McpTool[]) => ({
  name,
  origin: `https://${name}-mcp.test`,
  tools: tools.map((tool) => tool.name),
  server: createMcpServer({ name, tools }),
});

// The specs' MCP servers, answered here (Node) before the recorder: every agent that reads MCP_SERVERS
// (src/mcp.ts) is given all of them (below). `npx dynamicagents add-tenant NAME --mcp` adds one.
const mcpServers: Array<ReturnType<typeof testMcpServer>> = [];

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.jsonc" },
      // The AI binding is remote-only; the specs answer the model's calls themselves (scriptedChatModel).
      remoteBindings: false,
      // Subagent classes (a delegating tenant's): the runtime makes them from the Worker's exports, which
      // the pool cannot see through src/tenants.ts's `export *`. `add-tenant NAME --round` adds its class here.
      additionalExports: {},
      miniflare: {
        bindings: {
          A2A_SIGNING_KEY: signingKey,
          // The gatekeeper the harness plays (createAgentHarness's default).
          GATEKEEPER_ORIGINS: JSON.stringify(["https://gatekeeper.test"]),
          // Model calls go to an OpenAI-compatible endpoint the specs fake, never to Workers AI.
          OPENAI_BASE_URL: "https://model.test/v1",
          OPENAI_MODEL: "spec-model",
          MCP_SERVERS: JSON.stringify(mcpServers.map((s) => ({ name: s.name, url: `${s.origin}/mcp`, trustedTools: s.tools }))),
          MCP_ALLOWLIST: JSON.stringify(mcpServers.map((s) => s.origin)),
        },
        outboundService: (request: Request) =>
          mcpServers.find((s) => s.origin === new URL(request.url).origin)?.server.handle(request) ?? vcr.outboundService(request),
      },
    }),
  ],
  test: { include: ["test/**/*.spec.ts"] },
});
