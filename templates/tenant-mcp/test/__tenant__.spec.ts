import { exports } from "cloudflare:workers";
import { createAgentHarness, scriptedChatModel } from "@dynamicagents/core/testing";
import { describe, expect, it } from "vitest";

describe("__tenant__", () => {
  it("calls its MCP server's lookup tool and answers with what it returned", async () => {
    // vitest.config.ts serves the MCP server "__tenant__" at https://__tenant__-mcp.test/mcp (createMcpServer) and gives
    // it to the Worker in MCP_SERVERS, its tools trusted; they reach the model as <server>__<tool>.
    const harness = createAgentHarness({ worker: exports.default, tenant: "__tenant__" });
    const model = scriptedChatModel((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: "__tenant____lookup", args: { query: "Paris" } }] }
        : `Found: ${request.toolResults[0]!.content}`,
    );
    using gatekeeper = harness.interceptGatekeeper({ model });

    const accepted = await harness.send("What do you know about Paris?");
    const done = await gatekeeper.terminal(accepted.id);

    // A task that failed says why in its status message: shown if this fails.
    expect(done.status.state, done.status.message?.parts[0]?.text).toBe("TASK_STATE_COMPLETED");
    expect(model.requests[0]!.tools).toContain("__tenant____lookup");
    expect(model.requests[1]!.toolResults[0]!.toolName).toBe("__tenant____lookup");
    expect(done.artifacts[0].parts[0].text).toContain("nothing yet about Paris");
  });
});
