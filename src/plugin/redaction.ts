import { wrapExecutes } from "./wrap-tools.js";
import type { ToolSet } from "ai";
import type { ToolResultEvent } from "./contract.js";
import { capResult, clipJson, clipText, REDACTOR_VIEW_FACTOR, type ResultCap } from "./result-cap.js";

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
 * Runs a tool's result through the one path everything the model reads of a
 * tool passes, in this order: cut to {@link REDACTOR_VIEW_FACTOR} times the
 * cap, redacted, then capped in serialized bytes (the note saying so), so a
 * secret is never cut in half where the redactors cannot see it, and no
 * result outgrows a journal row (docs/tools.md "Result size"). A tool that
 * throws is answered with `{ error: <its message> }`, cut and redacted the
 * same way: the SDK would otherwise hand the error text to the model as is,
 * and an error quotes what the tool was handling often enough. With no
 * redactor a throw stays a throw (the SDK reports it to the model), its
 * message capped.
 */
export function redactToolResults<T extends ToolSet>(
  tools: T,
  redactors: readonly ToolResultRedactor[],
  options: { cap: ResultCap; observe?: ToolCallObserver },
): T {
  const { cap, observe } = options;
  const redact = redactWith(redactors);
  return wrapExecutes(tools, (toolName, execute) => async (input, callOptions) => {
    let output: unknown;
    let errored = false;
    try {
      output = await execute(input, callOptions);
    } catch (error) {
      errored = true;
      if (redactors.length === 0) {
        observe?.(callOptions, { errored, redacted: false });
        throw cappedError(error, cap);
      }
      output = { error: error instanceof Error ? error.message : String(error) };
    }
    const seen = clipJson(output, cap.maxBytes * REDACTOR_VIEW_FACTOR);
    const redacted = redactors.length ? await redact({ toolName, input, output: seen.value }) : seen.value;
    observe?.(callOptions, { errored, redacted: redacted !== seen.value });
    return capResult(redacted, cap, seen.cut);
  });
}

/** A thrown error as the model gets it: itself, or one of its kind whose message is cut to the cap, the note after it. */
function cappedError(error: unknown, cap: ResultCap): unknown {
  const message = error instanceof Error ? error.message : String(error);
  const room = cap.maxBytes - new TextEncoder().encode(cap.note).byteLength - 2;
  if (clipText(message, cap.maxBytes) === message) return error;
  const cut = new Error(`${clipText(message, Math.max(0, room))}\n\n${cap.note}`);
  if (error instanceof Error) cut.name = error.name;
  return cut;
}
