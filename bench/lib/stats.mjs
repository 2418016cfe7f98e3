/** Nearest-rank percentile (p in 0..100) of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** What the report shows for one series of latencies (ms) measured over `elapsedMs` of wall time. */
export function summarize(latencies, elapsedMs) {
  const sorted = Float64Array.from(latencies).sort();
  return {
    count: sorted.length,
    rps: sorted.length / (elapsedMs / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}

export const ratio = (a, b) => (b > 0 ? a / b : NaN);
