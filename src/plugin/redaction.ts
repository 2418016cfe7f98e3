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

/** What became of one tool call: whether the tool threw, whether a redactor replaced its result. */
export interface ToolCallVerdict {
  errored: boolean;
  redacted: boolean;
}

/**
 * Hears each call's verdict, keyed by the call's options object (the one its
 * caller handed `execute`), so a wrapper around these tools can tell its own
 * call's verdict apart from a parallel one's.
 */
export type ToolCallObserver = (callOptions: unknown, verdict: ToolCallVerdict) => void;

/**
 * Runs a tool's result through the redactors before the model sees it. A
 * tool that throws is answered with `{ error: <its message> }`, redacted the
 * same way: the SDK would otherwise hand the error text to the model as is,
 * and an error quotes what the tool was handling often enough. With no
 * redactor a throw stays a throw (the SDK reports it to the model).
 */
export function redactToolResults<T extends ToolSet>(tools: T, redactors: readonly ToolResultRedactor[], observe?: ToolCallObserver): T {
  if (redactors.length === 0) {
    if (!observe) return tools;
    return wrapExecutes(tools, (_toolName, execute) => async (input, options) => {
      try {
        const output = await execute(input, options);
        observe(options, { errored: false, redacted: false });
        return output;
      } catch (error) {
        observe(options, { errored: true, redacted: false });
        throw error;
      }
    });
  }
  const redact = redactWith(redactors);
  return wrapExecutes(tools, (toolName, execute) => async (input, options) => {
    let output: unknown;
    let errored = false;
    try {
      output = await execute(input, options);
    } catch (error) {
      errored = true;
      output = { error: error instanceof Error ? error.message : String(error) };
    }
    const redacted = await redact({ toolName, input, output });
    observe?.(options, { errored, redacted: redacted !== output });
    return redacted;
  });
}
