import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { exportJWK, generateKeyPair } from "jose";
import { defineConfig } from "vitest/config";

// A fresh card key per run: nothing secret is committed, and no test can come
// to depend on a particular key.
const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
const signingKey = JSON.stringify({ ...(await exportJWK(privateKey)), kid: "a2a-test" });
// The simulated gatekeeper's key, shared by every spec file so the edge's
// per-isolate JWKS cache always agrees with the tokens specs mint.
const gatekeeper = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
const gatekeeperKey = JSON.stringify({ ...(await exportJWK(gatekeeper.privateKey)), kid: "gatekeeper-test-1" });

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.jsonc" },
      // The AI binding is remote-only; tests fake the model instead.
      remoteBindings: false,
      // Subagents are facets: exported from the Worker, made by the runtime, never bound.
      additionalExports: { ResearchSubagent: "DurableObject" },
      miniflare: {
        bindings: {
          A2A_SIGNING_KEY: signingKey,
          TEST_GATEKEEPER_KEY: gatekeeperKey,
          GATEKEEPER_ORIGINS: JSON.stringify(["https://gatekeeper.test", "https://other-gatekeeper.test", "http://127.0.0.1:9999"]),
          // The model is outside the system: specs answer these calls themselves.
          OPENAI_BASE_URL: "https://model.test/v1",
          OPENAI_MODEL: "primary-model",
          OPENAI_FALLBACK_MODEL: "fallback-model",
        },
        // Whatever a spec did not intercept never reaches a real network.
        outboundService: (request: Request) =>
          new Response(`tests are offline: ${request.method} ${request.url}`, { status: 503 }),
      },
    }),
  ],
  test: {
    include: ["test/**/*.spec.ts"],
  },
});
