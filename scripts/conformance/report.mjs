// The verdict of a conformance run (docs/conformance.md "The suite's mistakes"):
// every MUST requirement the suite marks FAIL must be listed in the doc with
// its reason, or the run fails. Kept apart from the runner so a spec reads
// the same list and judges a report the same way.
import { readFileSync } from "node:fs";

/** The heading of the list in docs/conformance.md. */
const KNOWN_HEADING = "## The suite's mistakes";

/**
 * The requirements docs/conformance.md lists as the suite's mistakes: each a
 * table row `| \`REQ-ID\` | reason |` under {@link KNOWN_HEADING}, up to the
 * next `## ` heading. A row with no reason is refused: the list is the
 * reasons, not a way to silence a requirement.
 * @param {string} markdown
 * @returns {Map<string, string>} requirement id → reason
 */
export function knownMistakes(markdown) {
  const start = markdown.indexOf(`\n${KNOWN_HEADING}\n`);
  if (start < 0) throw new Error(`docs/conformance.md has no "${KNOWN_HEADING}" section`);
  const body = markdown.slice(start + KNOWN_HEADING.length + 2);
  const end = body.search(/^## /m);
  const known = new Map();
  for (const line of (end < 0 ? body : body.slice(0, end)).split("\n")) {
    const row = /^\|\s*`([A-Z][A-Z0-9-]+)`\s*\|(.*)\|\s*$/.exec(line);
    if (!row) continue;
    const reason = row[2].trim();
    if (!reason) throw new Error(`docs/conformance.md lists ${row[1]} without a reason`);
    known.set(row[1], reason);
  }
  return known;
}

/** {@link knownMistakes} of the file at `path`. */
export const knownMistakesIn = (path) => knownMistakes(readFileSync(path, "utf8"));

/**
 * Judges the suite's `reports/compatibility.json`.
 * @param {{ per_requirement: Record<string, { level: string, status: string, errors?: string[] }> }} report
 * @param {Map<string, string>} known
 */
export function judge(report, known) {
  const counts = {};
  const unexpected = [];
  const excused = [];
  for (const [id, req] of Object.entries(report.per_requirement ?? {})) {
    const level = (counts[req.level] ??= { PASS: 0, FAIL: 0, SKIPPED: 0, total: 0 });
    level[req.status] = (level[req.status] ?? 0) + 1;
    level.total++;
    if (req.level !== "MUST" || req.status !== "FAIL") continue;
    const entry = { id, error: req.errors?.[0] ?? "no details" };
    if (known.has(id)) excused.push({ ...entry, reason: known.get(id) });
    else unexpected.push(entry);
  }
  // A listed requirement that now passes is stale: the list must stay the truth.
  const stale = [...known.keys()].filter((id) => report.per_requirement?.[id]?.status === "PASS");
  return { counts, unexpected, excused, stale, ok: unexpected.length === 0 };
}

/** The lines the runner prints: one per level, then every MUST failure, excused or not. */
export function summaryLines(verdict) {
  const lines = [];
  for (const level of ["MUST", "SHOULD", "MAY"]) {
    const c = verdict.counts[level];
    // The rest the suite marks NOT TESTED: it has no test for them.
    if (c)
      lines.push(
        `${level.padEnd(6)} ${c.PASS} passed, ${c.FAIL} failed, ${c.SKIPPED} skipped, ${c.total - c.PASS - c.FAIL - c.SKIPPED} not tested, of ${c.total}`,
      );
  }
  for (const f of verdict.excused) lines.push(`  excused ${f.id}: ${f.reason}`);
  for (const f of verdict.unexpected) lines.push(`  FAILED  ${f.id}: ${f.error}`);
  for (const id of verdict.stale) lines.push(`  note    ${id} is listed as the suite's mistake in docs/conformance.md but passed`);
  return lines;
}
