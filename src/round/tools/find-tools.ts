import { tool, type StepResult, type Tool, type ToolSet } from "ai";
import { z } from "zod";
import { rankTools, type RankedTool } from "./ranker.js";

/** The control tool the model finds the tools on search with. */
export const FIND_TOOLS_TOOL = "find_tools";

/**
 * `find_tools`: the best matches among the tools on search, names and
 * descriptions only. What it returns is the record of what was found: the
 * turn reads it back from its messages to send those tools' schemas.
 */
export function findToolsTool(options: { description: string; searchable: readonly RankedTool[]; limit: number }): Tool {
  return tool({
    description: options.description,
    inputSchema: findToolsInput,
    execute: async ({ query }) => rankTools(query, options.searchable, options.limit),
  });
}

// Once per isolate: a schema object is converted to JSON Schema once (tool-schemas.ts).
const findToolsInput = z.object({ query: z.string() });
const foundList = z.array(z.object({ name: z.string() }));
const toolMessage = z.object({ role: z.literal("tool"), content: z.array(z.unknown()) });
const findResultPart = z.object({
  type: z.literal("tool-result"),
  toolName: z.literal(FIND_TOOLS_TOOL),
  output: z.object({ type: z.literal("json"), value: foundList }),
});

/** What each `find_tools` call answered in these (model-form) messages, oldest first: one list of names per call. */
export function foundInMessages(messages: readonly unknown[]): string[][] {
  const found: string[][] = [];
  for (const message of messages) {
    const parsed = toolMessage.safeParse(message);
    if (!parsed.success) continue;
    for (const part of parsed.data.content) {
      const result = findResultPart.safeParse(part);
      if (result.success) found.push(result.data.output.value.map((t) => t.name));
    }
  }
  return found;
}

/** The same, for the steps the current exchange has taken so far. */
export function foundInSteps(steps: readonly StepResult<ToolSet>[]): string[][] {
  const found: string[][] = [];
  for (const step of steps) {
    for (const result of step.toolResults) {
      if (result.toolName !== FIND_TOOLS_TOOL) continue;
      const value = foundList.safeParse(result.output);
      if (value.success) found.push(value.data.map((t) => t.name));
    }
  }
  return found;
}
