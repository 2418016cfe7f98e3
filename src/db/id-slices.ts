/**
 * A statement on Durable Object SQLite binds at most 100 variables, so a list
 * of ids goes into `IN (…)` a slice at a time (a longer list fails with "too
 * many SQL variables").
 */
const SLICE = 90;

export function idSlices<T>(ids: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < ids.length; i += SLICE) out.push(ids.slice(i, i + SLICE));
  return out;
}
