import { roundResultHead } from "../a2a/wire.js";
import type { SubtaskRow } from "../db/subtask-store.js";
import type { ToolResultEvent } from "../plugin/contract.js";

/** The results of earlier rounds as the model reads them, one block per subtask. */
export function renderSubtaskResults(rows: readonly SubtaskRow[]): string {
  return rows
    .map((row) => {
      const head = roundResultHead(row.round, row.type, row.paramsJson, row.status);
      if (row.status === "done") return `${head}\n${row.resultJson ?? ""}`;
      return `${head}${row.error ? `: ${row.error}` : ""}`;
    })
    .join("\n\n");
}

/**
 * The rows as the model may see them: each result, and each error, through
 * `redact` (the plugins' redactors, as for a tool result). A subagent read
 * what the tools would have read, so its result is no safer to show as is.
 */
export async function redactSubtaskRows(rows: readonly SubtaskRow[], redact: (event: ToolResultEvent) => Promise<unknown>): Promise<SubtaskRow[]> {
  return Promise.all(
    rows.map(async (row) => {
      const input: unknown = JSON.parse(row.paramsJson);
      if (row.status === "done") {
        const output = await redact({ toolName: row.type, input, output: row.resultJson == null ? undefined : JSON.parse(row.resultJson) });
        return { ...row, resultJson: output === undefined ? null : JSON.stringify(output) };
      }
      if (!row.error) return row;
      const output = await redact({ toolName: row.type, input, output: { error: row.error } });
      const error = (output as { error?: unknown } | null | undefined)?.error;
      return { ...row, error: typeof error === "string" ? error : JSON.stringify(output) };
    }),
  );
}
