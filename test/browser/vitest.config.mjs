// `npm run test:browser`: the dev console in headless Chromium against the
// real `npm start` stack (wrangler dev, the dev gatekeeper, the stand-in
// model), offline. Kept out of `npm test` (vitest.config.ts) because it needs
// a browser and starts the whole stack.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "browser",
    root: new URL("../..", import.meta.url).pathname,
    include: ["test/browser/**/*.browser.mjs"],
    environment: "node",
    // One stack, one browser, the cases in order.
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
