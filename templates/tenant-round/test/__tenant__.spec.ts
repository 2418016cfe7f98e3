import { exports } from "cloudflare:workers";
import { createAgentHarness, scriptedChatModel } from "@dynamicagents/core/testing";
import { describe, expect, it } from "vitest";

describe("__tenant__", () => {
  it("delegates a lookup, runs it in a subagent, and answers from its result", async () => {
    // The harness sends a turn exactly as a gatekeeper does (its key is the one vitest.config.ts trusts).
    const harness = createAgentHarness({ worker: exports.default, tenant: "__tenant__" });
    // The model, scripted: round 1 delegates one subtask (the delegate tool's arguments are
    // `{ subtasks: [{ type, params }] }`); round 2 is sent the results, last, and answers with them.
    const model = scriptedChatModel((request, index) =>
      index === 0
        ? { toolCalls: [{ name: "delegate", args: { subtasks: [{ type: "lookup", params: { query: "Paris" } }] } }] }
        : `From my lookups: ${String(request.messages.at(-1)!.content)}`,
    );
    using gatekeeper = harness.interceptGatekeeper({ model });

    const accepted = await harness.send("What do you know about Paris?");
    const done = await gatekeeper.terminal(accepted.id);

    // A task that failed says why in its status message: shown if this fails.
    expect(done.status.state, done.status.message?.parts[0]?.text).toBe("TASK_STATE_COMPLETED");
    // Round 1 was offered the delegate tool; round 2 was sent the subtask's result under the policy's header.
    expect(model.requests[0]!.tools).toContain("delegate");
    expect(String(model.requests[1]!.messages.at(-1)!.content)).toContain("Results of the subtasks delegated so far:");
    expect(done.artifacts[0].parts[0].text).toContain("nothing yet about Paris");
  });
});
