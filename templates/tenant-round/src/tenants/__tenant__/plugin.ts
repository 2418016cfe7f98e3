import { definePlugin, defineSubtaskType } from "@dynamicagents/core/plugin";
import { z } from "zod";

/**
 * The __tenant__ tenant's subtask type, which its model delegates with the `delegate` tool
 * (`{ subtasks: [{ type: "lookup", params: { query: "Paris" } }] }`). A skeleton: make the recipe do
 * the real thing. Each `ctx.chunk` is kept when it finishes, so a subagent that was evicted goes on
 * after its last finished chunk; `ctx.generate` calls the model, counted in the turn's usage.
 */
export const __name__Plugin = () =>
  definePlugin({
    key: "__tenant__",
    // Joins the agent's system prompt: tell the model what it may delegate.
    capability: "You can have things looked up by delegating lookup subtasks, several at once.",
    subtaskTypes: [
      defineSubtaskType({
        key: "lookup",
        description: "Looks up one thing and reports what it found.",
        params: z.object({ query: z.string().describe("what to look up") }),
        // Bump it whenever the recipe's behaviour changes: a result is kept for (type, params, version).
        recipeVersion: 1,
        recipe: async (ctx, { query }) => ctx.chunk("look-up", async () => ({ query, found: `nothing yet about ${query}: this recipe is a skeleton` })),
      }),
    ],
  });
