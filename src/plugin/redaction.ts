import { wrapExecutes } from "./wrap-tools.js";
import type { ToolSet } from "ai";
import type { ToolResultEvent } from "./contract.js";

export type ToolResultRedactor = (event: ToolResultEvent) => unknown | Promise<unknown>;

/** What the model sees when a redactor failed: nothing of the original result, and no sentence of core's. */
export const REDACTION_FAILED_STUB = { withheld: true, reason: "redaction-failed" } as const;

/**
 * The one redaction step everything the model reads of a tool or a subtask
 * passes: every redactor in turn, each seeing the previous one's output.
 * Fails closed: a redactor that throws yields {@link REDACTION_FAILED_STUB},
 * never the unredacted output.
 */
export function redactWith(redactors: readonly ToolResultRedactor[]): (event: ToolResultEvent) => Promise<unknown> {
  return async (event) => {
    let output = event.output;
    for (const redact of redactors) {
      try {
        const replaced = await redact({ ...event, output });
        if (replaced !== undefined) output = replaced;
      } catch (error) {
        console.error(`redaction of ${event.toolName}'s result failed; the model gets a stub`, error);
        return REDACTION_FAILED_STUB;
      }
    }
    return output;
  };
}

/**
 * Runs a tool's result through the redactors before the model sees it. A
 * tool that throws is answered with `{ error: <its message> }`, redacted the
 * same way: the SDK would otherwise hand the error text to the model as is,
 * and an error quotes what the tool was handling often enough.
 */
export function redactToolResults<T extends ToolSet>(tools: T, redactors: readonly ToolResultRedactor[]): T {
  if (redactors.length === 0) return tools;
  const redact = redactWith(redactors);
  return wrapExecutes(tools, (toolName, execute) => async (input, options) => {
    let output: unknown;
    try {
      output = await execute(input, options);
    } catch (error) {
      output = { error: error instanceof Error ? error.message : String(error) };
    }
    return redact({ toolName, input, output });
  });
}
