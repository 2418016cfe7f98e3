// `npm run test:e2e`: runs `npm start` for real — wrangler dev, the dev
// gatekeeper, the stand-in model — as a newcomer would, offline. Kept out of
// `npm test` (vitest.config.ts) because it starts the whole stack several times.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "e2e",
    root: new URL("../../..", import.meta.url).pathname,
    include: ["test/node/e2e/**/*.e2e.mjs"],
    environment: "node",
    // One file, run in order: each case starts and stops the stack.
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 60_000,
  },
});
