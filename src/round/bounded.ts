/** Runs `work` over `items` with at most `limit` at a time; stops starting new ones once `stop()` says so. */
export async function runBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>, stop: () => boolean): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length && !stop()) {
      const item = items[next++]!;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
