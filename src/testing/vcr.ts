import { afterEach, beforeEach, expect } from "vitest";

const CONTROL = "http://vcr.invalid";

/** `test/turn.spec.ts` + "accept, then notify" + "delivers…" → `turn/accept-then-notify/delivers…`. */
export function cassetteName(testPath: string, testName: string): string {
  const file = (testPath.split("/").pop() ?? "spec").replace(/\.(spec|test)\.[cm]?[jt]s$/, "");
  const slug = (part: string) =>
    part
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 80);
  return [file, ...testName.split(" > ").map(slug)].filter(Boolean).join("/");
}

/**
 * Gives every test of the spec file its own cassette, named from the file,
 * describe and test names; the recorder lives in the Node realm (see
 * `@dynamicagents/core/testing/node`). A test during which a request was
 * blocked (no recording of it) fails, naming the cassette and the request.
 */
export function setupRecording(): void {
  // Captured now: a spec may replace `fetch` later (to play the gatekeeper),
  // and the control calls must still reach the recorder.
  const send = globalThis.fetch.bind(globalThis);
  beforeEach(async () => {
    const { testPath, currentTestName } = expect.getState();
    const name = cassetteName(testPath ?? "spec", currentTestName ?? "test");
    const response = await send(`${CONTROL}/use`, { method: "POST", body: JSON.stringify({ cassette: name }) });
    if (!response.ok) throw new Error(`the VCR recorder did not answer (${response.status}): is its outboundService installed in the vitest config?`);
  });
  afterEach(async () => {
    const { blocked } = (await (await send(`${CONTROL}/eject`, { method: "POST" })).json()) as { blocked: string[] };
    if (blocked.length)
      throw new Error(
        `VCR blocked ${blocked.length} request(s):\n${blocked.map((b) => `  - ${b}`).join("\n")}\nRe-record with RECORD=1 (see cassettes/README.md).`,
      );
  });
}
