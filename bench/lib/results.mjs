// A run's raw figures go to bench/results/ (git-ignored), a file per run named
// by its kind and the time it was written, so runs back to back keep each
// other's: bench/README.md reports medians over several of them.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
export const RESULTS_DIR = join(BENCH_DIR, "results");

/** `bench/results/<kind>-<UTC time, ms>.json` for a run written at `at`. */
export const resultName = (kind, at = new Date()) => `${kind}-${at.toISOString().replaceAll(":", "-").replace(".", "-")}.json`;

/** Writes `data` as a new result file of `kind`; returns its path from the repository's root, for the log. */
export async function writeResult(kind, data, at = new Date()) {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, resultName(kind, at));
  await writeFile(file, `${JSON.stringify(data, null, 2)}\n`);
  return relative(dirname(BENCH_DIR), file);
}
