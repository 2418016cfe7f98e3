import { generateKeyPairSync } from "node:crypto";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { createVcr, recordFromEnv } from "@dynamicagents/core/testing/node";
import { defineConfig } from "vitest/config";

// Offline (README "Offline"): miniflare would fetch `Request.cf` data from workers.cloudflare.com
// when the pool starts outside NODE_ENV=test; the specs read none of it.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

// A fresh card key per run: nothing secret is committed, and no spec can come to depend on one key.
const signingKey = JSON.stringify({ ...generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }), kid: "a2a-test" });

// Every request a spec's Worker makes that the spec did not answer itself: replayed from cassettes/
// (a spec that calls setupRecording()), recorded with RECORD=1, otherwise refused. Specs stay offline.
const vcr = createVcr({ cassettesDir: "cassettes", record: recordFromEnv() });

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.jsonc" },
      // The AI binding is remote-only; the specs answer the model's calls themselves (scriptedChatModel).
      remoteBindings: false,
      miniflare: {
        bindings: {
          A2A_SIGNING_KEY: signingKey,
          // The gatekeeper the harness plays (createAgentHarness's default).
          GATEKEEPER_ORIGINS: JSON.stringify(["https://gatekeeper.test"]),
          // Model calls go to an OpenAI-compatible endpoint the specs fake, never to Workers AI.
          OPENAI_BASE_URL: "https://model.test/v1",
          OPENAI_MODEL: "spec-model",
        },
        outboundService: (request: Request) => vcr.outboundService(request),
      },
    }),
  ],
  test: { include: ["test/**/*.spec.ts"] },
});
