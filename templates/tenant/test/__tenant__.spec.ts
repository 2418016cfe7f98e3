import { exports } from "cloudflare:workers";
import { createAgentHarness } from "@dynamicagents/core/testing";
import { describe, expect, it } from "vitest";
import { playGatekeeper } from "./support/gatekeeper.js";
import { callsTool } from "./support/model.js";

describe("__tenant__", () => {
  it("uses its lookup tool and answers with what it found", async () => {
    // The harness sends a turn exactly as a gatekeeper does; the fake model calls the tool, then answers.
    const harness = createAgentHarness({ worker: exports.default, tenant: "__tenant__" });
    using gatekeeper = playGatekeeper(callsTool("lookup", { query: "Paris" }));

    const accepted = await harness.send("Look up Paris.");
    const done = await gatekeeper.terminal(accepted.id);

    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.artifacts[0].parts[0].text).toContain("nothing yet about Paris");
  });
});
