import { AsyncLocalStorage } from "node:async_hooks";
import type { ToolSet } from "ai";
import { PROGRESS_PARAMS, clipChars } from "../../a2a/progress.js";
import type { ProgressWords, TrackerState } from "../../agent/policy.js";
import { MCP_PLUGIN_KEY } from "../../mcp/plugin.js";
import type { AgentPlugin, ToolContext, ToolResultEvent } from "../../plugin/contract.js";
import { REDACTION_FAILED_STUB } from "../../plugin/redaction.js";
import { wrapExecutes } from "../../plugin/wrap-tools.js";
import { scrubSecrets } from "../../telemetry/index.js";
import type { ProgressRecorder } from "./recorder.js";

/** What the tool trackers of a round are made with. */
export interface ToolTracking {
  recorder: ProgressRecorder;
  words: ProgressWords;
  /** Every redactor of the agent's plugins, failing closed (`AgentRuntime.redact`). */
  redact: (event: ToolResultEvent) => Promise<unknown>;
  /** Values nothing shown may carry. */
  secrets: readonly (string | undefined)[];
  round: number;
  /** Called before a call's tracker starts: the round's own tracker starts with its first piece of work. */
  working: () => void;
}

/** The call a tool's code runs in: what `ToolContext.progress` reports on. */
interface Call {
  id: string;
  tool: string;
  input: unknown;
  arguments?: string;
}

const calls = new AsyncLocalStorage<Call>();

/**
 * The plugins' tools (those `owners` names; control tools pass unchanged),
 * each call a tracker (docs/protocol.md "Progress"): `tool:` or, for an MCP
 * server's, `mcp:` and the call's id, running while it runs, then completed,
 * or failed (it threw, or `failed` says its result is an error). What it shows
 * besides the agent's words (its arguments, its result) is only what its
 * plugin opts in to, after the redactors. Wrapped inside the journal, so a
 * call answered from the journal is not work, and has no tracker.
 */
export function trackTools(
  tools: ToolSet,
  owners: ReadonlyMap<string, AgentPlugin>,
  tracking: ToolTracking,
  failed: (callOptions: unknown) => boolean,
): ToolSet {
  let unnamed = 0;
  return wrapExecutes(tools, (tool, execute) => {
    const owner = owners.get(tool);
    if (!owner) return execute;
    const kind = owner.key === MCP_PLUGIN_KEY ? "mcp" : "tool";
    const { showArguments = false, showResults = false } = owner.progress ?? {};
    return async (input, callOptions) => {
      const { recorder, words } = tracking;
      const id = `${kind}:${callIdOf(callOptions) ?? `r${tracking.round}.${++unnamed}`}`;
      const call: Call = { id, tool, input, ...(showArguments ? { arguments: await shown(tracking, tool, input, input) } : {}) };
      const say = (status: TrackerState, more: { result?: string } = {}) =>
        words.tool({ tool, status, ...(call.arguments ? { arguments: call.arguments } : {}), ...more });
      tracking.working();
      recorder.start(id, { message: say("running") });
      let output: unknown;
      try {
        output = await calls.run(call, () => execute(input, callOptions));
      } catch (error) {
        recorder.end(id, "failed", say("failed"));
        throw error;
      }
      if (failed(callOptions)) recorder.end(id, "failed", say("failed"));
      else {
        // The result as the model got it (redacted and capped already), with no secret of the object's.
        const result = showResults ? shownText(output, tracking.secrets) : undefined;
        recorder.end(id, "completed", say("completed", result ? { result } : {}));
      }
      return output;
    };
  });
}

/**
 * `ToolContext.progress`: how far the call it is made from got, on that
 * call's tracker. The tool's own message passes the redactors first; one they
 * refuse is not shown.
 */
export function toolProgress(tracking: ToolTracking): ToolContext["progress"] {
  return (update) => {
    const call = calls.getStore();
    if (!call || !tracking.recorder.running(call.id)) return;
    const numbers = { progress: update.progress, ...(update.total === undefined ? {} : { total: update.total }) };
    if (!update.message) return tracking.recorder.update(call.id, numbers);
    void shown(tracking, call.tool, call.input, update.message).then((note) => {
      const message = tracking.words.tool({
        tool: call.tool,
        status: "running",
        ...(call.arguments ? { arguments: call.arguments } : {}),
        ...(note ? { note } : {}),
      });
      tracking.recorder.update(call.id, { ...numbers, message });
    });
  };
}

/** The id the model gave the call, within the draft's bounds. */
function callIdOf(callOptions: unknown): string | undefined {
  const id = typeof callOptions === "object" && callOptions !== null ? (callOptions as { toolCallId?: unknown }).toolCallId : undefined;
  return typeof id === "string" && id !== "" ? clipChars(id, PROGRESS_PARAMS.maxIdChars - 4) : undefined;
}

/** `value` as every redactor leaves it, for a tool's tracker; nothing when one of them failed. */
async function shown(tracking: ToolTracking, toolName: string, input: unknown, value: unknown): Promise<string | undefined> {
  const redacted = await tracking.redact({ toolName, input, output: value });
  return redacted === REDACTION_FAILED_STUB ? undefined : shownText(redacted, tracking.secrets);
}

/** A value as a tracker's words get it: text, or JSON, replaced whole if it holds a secret of the object's (as events are). */
function shownText(value: unknown, secrets: readonly (string | undefined)[]): string | undefined {
  const text = scrubSecrets(typeof value === "string" ? value : (JSON.stringify(value) ?? ""), secrets);
  return text === "" ? undefined : clipChars(text, PROGRESS_PARAMS.maxMessageChars);
}
