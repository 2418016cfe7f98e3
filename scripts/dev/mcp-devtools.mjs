// The MCP server `npm start` gives the assistant (MCP_SERVERS): three harmless
// tools on loopback, so that an agent's MCP path (connect, list, call, the
// tool.call and mcp.server events, progress notifications) runs offline, with
// the stand-in model or a real one alike. Served on its own port, not the
// stand-in model's: the stand-in is not started when a real model is
// configured, the tools are.
import { z } from "zod";
import { createMcpServer } from "../../src/testing/node/mcp-server.ts";
import { serveMcp } from "./mcp-http.mjs";

/** The server's name in the agent's config: its tools reach the model as `devtools__roll_dice`, `devtools__count_words`, `devtools__count_down`. */
export const DEVTOOLS_SERVER = "devtools";

/** @type {import("../../src/testing/node/mcp-server.ts").McpTool[]} */
const TOOLS = [
  {
    name: "roll_dice",
    description: "Rolls `count` dice with `sides` sides each and returns every roll and their total.",
    inputSchema: z.object({
      sides: z.number().int().min(2).max(100).describe("sides of each die"),
      count: z.number().int().min(1).max(10).describe("how many dice"),
    }),
    handler: ({ sides, count }) => {
      const rolls = Array.from({ length: count }, () => 1 + Math.floor(Math.random() * sides));
      return `rolled ${count}d${sides}: ${rolls.join(", ")} (total ${rolls.reduce((a, b) => a + b, 0)})`;
    },
  },
  {
    name: "count_words",
    description: "Counts the words and characters of a text.",
    inputSchema: z.object({ text: z.string().max(100_000).describe("the text to count") }),
    handler: ({ text }) => {
      const words = text.trim() === "" ? 0 : text.trim().split(/\s+/).length;
      return `${words} word${words === 1 ? "" : "s"}, ${text.length} character${text.length === 1 ? "" : "s"}`;
    },
  },
  {
    // A tool worth watching (docs/protocol.md "Progress"): its call is a tracker whose progress the notifications move.
    name: "count_down",
    description: "Counts down `seconds` seconds, telling the caller how far it got each second, and says when it is done.",
    inputSchema: z.object({ seconds: z.number().int().min(1).max(30).describe("how many seconds") }),
    handler: async ({ seconds }, { signal, progress }) => {
      for (let done = 1; done <= seconds; done++) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        if (signal.aborted) return `stopped after ${done - 1} s`;
        await progress(done, { total: seconds, message: `${seconds - done} s left` });
      }
      return `counted down ${seconds} s`;
    },
  },
];

/**
 * Starts the dev MCP server on 127.0.0.1:`port` (0 for any free port).
 * @param {{ port: number, portHint?: string }} options
 */
export async function startDevMcpServer({ port, portHint = "choose another with --mcp-port" }) {
  const mcp = createMcpServer({ name: DEVTOOLS_SERVER, tools: TOOLS });
  const served = await serveMcp(mcp, { port, what: "the dev MCP server", portHint });
  return { ...served, name: DEVTOOLS_SERVER, tools: TOOLS.map((t) => t.name) };
}
