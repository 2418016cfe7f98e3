import { definePlugin } from "@dynamicagents/core/plugin";
import { tool } from "ai";
import { z } from "zod";

/** The __tenant__ tenant's tools. A skeleton: make `lookup` do the real thing, or replace it with your own tools. */
export const __name__Plugin = () =>
  definePlugin({
    key: "__tenant__",
    // Joins the agent's system prompt: tell the model when to use the tools.
    capability: "You can look things up with the lookup tool.",
    toolFamilies: {
      __name__: () => ({
        tools: {
          lookup: tool({
            description: "Looks up what the user asks about.",
            inputSchema: z.object({ query: z.string().describe("what to look up") }),
            execute: async ({ query }) => ({ query, found: `nothing yet about ${query}: this tool is a skeleton` }),
          }),
        },
      }),
    },
  });
