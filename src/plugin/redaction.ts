import type { ToolSet } from "ai";
import type { ToolResultEvent } from "./contract.js";

export type ToolResultRedactor = (event: ToolResultEvent) => unknown | Promise<unknown>;

/** What the model sees when a redactor failed: nothing of the original result. */
export const REDACTION_FAILED_STUB = {
  redacted: true,
  note: "This tool result was withheld because the redaction step failed.",
} as const;

/**
 * Runs a tool's result through the redactors before the model sees it. Fails
 * closed: a redactor that throws yields {@link REDACTION_FAILED_STUB}, never the
 * unredacted result.
 */
export function redactToolResults<T extends ToolSet>(tools: T, redactors: ToolResultRedactor[]): T {
  if (redactors.length === 0) return tools;
  const wrapped: ToolSet = {};
  for (const [toolName, tool] of Object.entries(tools)) {
    const execute = tool.execute;
    if (!execute) {
      wrapped[toolName] = tool;
      continue;
    }
    wrapped[toolName] = {
      ...tool,
      execute: async (input: unknown, options: unknown) => {
        let output = await (execute as (i: unknown, o: unknown) => unknown)(input, options);
        for (const redact of redactors) {
          try {
            const replaced = await redact({ toolName, input, output });
            if (replaced !== undefined) output = replaced;
          } catch (error) {
            console.error(`redaction of ${toolName}'s result failed; the model gets a stub`, error);
            return REDACTION_FAILED_STUB;
          }
        }
        return output;
      },
    } as ToolSet[string];
  }
  return wrapped as T;
}
