import { performance } from "node:perf_hooks";
import { summarize } from "./stats.mjs";

/**
 * Runs `request` `count` times with at most `concurrency` in flight (a plain
 * promise pool over the global fetch) and returns each call's latency in ms
 * plus the wall time of the whole batch. The first failure, or passing
 * `deadline` (epoch ms), stops the batch: a number built on errors or on a
 * stalled worker would be meaningless.
 * @param {{ count: number, concurrency: number, request: (i: number) => Promise<unknown>, deadline?: number, onProgress?: (done: number) => void }} options
 */
export async function runPool({ count, concurrency, request, deadline = Infinity, onProgress }) {
  const latencies = new Float64Array(count);
  let next = 0;
  let failure;
  const lane = async () => {
    while (failure === undefined && next < count) {
      if (Date.now() > deadline) {
        failure = new Error(`phase deadline passed after ${next} of ${count} requests`);
        return;
      }
      const i = next++;
      const started = performance.now();
      try {
        await request(i);
      } catch (error) {
        failure ??= error;
        return;
      }
      latencies[i] = performance.now() - started;
      onProgress?.(i + 1);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  const elapsedMs = performance.now() - started;
  if (failure) throw failure;
  return { latencies, elapsedMs };
}

/**
 * Measures several request kinds against each other. Each kind's `count` is
 * split into `rounds` blocks run in alternating order (A B C, C B A, …), so a
 * slow spell of a noisy machine lands on every kind alike instead of on
 * whichever happened to run then; ratios between kinds stay fair.
 */
export async function compare({ kinds, count, concurrency, rounds, deadline }) {
  const samples = new Map(kinds.map((k) => [k.name, { latencies: [], elapsedMs: 0 }]));
  const perRound = Math.ceil(count / rounds);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? kinds : [...kinds].reverse();
    const n = Math.min(perRound, count - round * perRound);
    if (n <= 0) break;
    for (const kind of order) {
      const { latencies, elapsedMs } = await runPool({ count: n, concurrency, request: kind.request, deadline });
      const sample = samples.get(kind.name);
      sample.latencies.push(...latencies);
      sample.elapsedMs += elapsedMs;
    }
  }
  return Object.fromEntries([...samples].map(([name, s]) => [name, summarize(s.latencies, s.elapsedMs)]));
}
