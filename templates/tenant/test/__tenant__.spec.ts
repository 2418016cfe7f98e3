import { exports } from "cloudflare:workers";
import { createAgentHarness, scriptedChatModel } from "@dynamicagents/core/testing";
import { describe, expect, it } from "vitest";

describe("__tenant__", () => {
  it("uses its lookup tool and answers with what it found", async () => {
    // The harness sends a turn exactly as a gatekeeper does (its key is the one vitest.config.ts trusts).
    const harness = createAgentHarness({ worker: exports.default, tenant: "__tenant__" });
    // The model, scripted: first it calls the tool, then it answers with the tool's result.
    const model = scriptedChatModel((request) =>
      request.toolResults.length === 0 ? { toolCalls: [{ name: "lookup", args: { query: "Paris" } }] } : `Found: ${request.toolResults[0]!.content}`,
    );
    using gatekeeper = harness.interceptGatekeeper({ model });

    const accepted = await harness.send("Look up Paris.");
    const done = await gatekeeper.terminal(accepted.id);

    // A task that failed says why in its status message: shown if this fails.
    expect(done.status.state, done.status.message?.parts[0]?.text).toBe("TASK_STATE_COMPLETED");
    // What the model was sent: the tool among its tools, then the tool's own result.
    expect(model.requests[0]!.tools).toContain("lookup");
    expect(model.requests[1]!.toolResults[0]!.toolName).toBe("lookup");
    expect(done.artifacts[0].parts[0].text).toContain("nothing yet about Paris");
  });
});
