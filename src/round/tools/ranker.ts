/** A tool as the ranker reads it: its name and what it says it does. */
export interface RankedTool {
  name: string;
  description: string;
}

/** A term in the name counts this many times one in the description: a name says what a tool is. */
const NAME_WEIGHT = 3;

/** Lower-cased runs of letters and digits: `github__create_issue` is `github`, `create`, `issue`. */
const termsOf = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

const countsOf = (terms: string[]) => {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
};

/** Plain code-unit order, the same in every runtime and locale. */
const byName = (a: RankedTool, b: RankedTool) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The tools that match a query best, at most `limit`: each distinct query
 * term scores its occurrences in the description plus `NAME_WEIGHT` times
 * its occurrences in the name; ties go by name, and a tool no term matches
 * is left out. No randomness and no state, so the same call always gives
 * the same list (a replayed step finds what the first run found).
 */
export function rankTools(query: string, tools: readonly RankedTool[], limit: number): RankedTool[] {
  const terms = [...new Set(termsOf(query))];
  if (terms.length === 0 || limit <= 0) return [];
  const scored = tools.flatMap((tool) => {
    const name = countsOf(termsOf(tool.name));
    const description = countsOf(termsOf(tool.description));
    const score = terms.reduce((sum, term) => sum + NAME_WEIGHT * (name.get(term) ?? 0) + (description.get(term) ?? 0), 0);
    return score > 0 ? [{ tool, score }] : [];
  });
  scored.sort((a, b) => b.score - a.score || byName(a.tool, b.tool));
  return scored.slice(0, limit).map(({ tool }) => ({ name: tool.name, description: tool.description }));
}
