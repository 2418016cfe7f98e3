import type { SubtaskRow } from "../db/subtask-store.js";

/** The results of earlier rounds as the model reads them, one block per subtask. */
export function renderSubtaskResults(rows: readonly SubtaskRow[]): string {
  return rows
    .map((row) => {
      const head = `[round ${row.round}] ${row.type} ${row.paramsJson} → ${row.status}`;
      if (row.status === "done") return `${head}\n${row.resultJson ?? ""}`;
      return `${head}${row.error ? `: ${row.error}` : ""}`;
    })
    .join("\n\n");
}
