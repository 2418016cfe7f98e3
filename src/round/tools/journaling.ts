import { wrapExecutes } from "../../plugin/wrap-tools.js";
import type { ToolSet } from "ai";
import { jcs } from "../../a2a/jcs.js";
import type { ToolJournal } from "../../db/tool-journal.js";

export interface JournalOptions {
  journal: ToolJournal;
  taskId: string;
  /**
   * Where in the turn this exchange is: the round and how many of the turn's
   * own messages came before it. A re-run from the same point (a retried
   * step, the fallback model) names the same calls; a later one, new ones.
   */
  point: string;
  /** What the model is told for a call that started and never finished (the agent's words). */
  interrupted: (toolName: string) => unknown;
  /** Hears each call once it is settled: run (and how it went), replayed from the journal, or reported interrupted. */
  onCall?: (call: JournaledCall) => void;
}

/** One call as the journal saw it. `key` names the call within its task (stable across replays). */
interface JournaledCall {
  key: string;
  toolName: string;
  outcome: "ok" | "error" | "replayed" | "interrupted";
  durationMs: number;
  /** The options the tool's `execute` was called with: what a redaction verdict is keyed by. */
  callOptions: unknown;
}

/**
 * Every tool, journaled: a call is recorded before it runs and its
 * (redacted) result before the model continues. The n-th call of a tool with
 * the same input at the same point of the turn is the same call: recorded
 * finished, it gets its result back without running; recorded and never
 * finished (the object died during it), it is reported as interrupted and
 * never run again.
 */
export function journaled(tools: ToolSet, options: JournalOptions): ToolSet {
  const occurrences = new Map<string, number>();
  return wrapExecutes(tools, (toolName, execute) => async (input, callOptions) => {
    const base = `${options.point}:${toolName}:${jcs(input ?? null)}`;
    const occurrence = occurrences.get(base) ?? 0;
    occurrences.set(base, occurrence + 1);
    const key = `${base}#${occurrence}`;
    const told = (outcome: JournaledCall["outcome"], started: number) =>
      options.onCall?.({ key, toolName, outcome, durationMs: Date.now() - started, callOptions });
    const started = Date.now();
    const recorded = options.journal.get(options.taskId, key);
    if (recorded?.status === "finished") {
      told("replayed", started);
      return JSON.parse(recorded.outputJson ?? "null");
    }
    if (recorded || !options.journal.start(options.taskId, key, toolName)) {
      told("interrupted", started);
      return options.interrupted(toolName);
    }
    let output: unknown;
    try {
      output = await execute(input, callOptions);
    } catch (error) {
      told("error", started);
      throw error;
    }
    options.journal.finish(options.taskId, key, output);
    told("ok", started);
    return output;
  });
}
