#!/usr/bin/env node
// `npm run check`: every static check, one after another. A failing step does
// not stop the ones after it, so one run shows everything that is wrong; the
// exit code is non-zero if any step failed. Each step is an npm script of its
// own and can be run alone (`npm run lint`, `npm run check:bundle`, …).
import { spawnSync } from "node:child_process";

const STEPS = [
  ["check:types", "tsc --noEmit, Workers and Node projects"],
  ["lint", "Biome: lint and formatting"],
  ["check:boundaries", "forbidden imports between folders"],
  ["check:sizes", "no file of src/ over 500 lines, src/host/ at most 2,600"],
  ["check:cycles", "import circles (type-only imports included)"],
  ["check:unused", "knip: unused exports, files, dependencies"],
  ["check:bundle", "reference bundle under 700 KiB gzipped"],
];

// Under `npm run`, npm_execpath is npm's own CLI: run the steps with it, on this Node.
const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ["npm", []];
const only = process.argv.slice(2);
const results = [];
for (const [script, what] of STEPS) {
  if (only.length > 0 && !only.includes(script)) continue;
  process.stdout.write(`\n── ${script}: ${what}\n`);
  const started = performance.now();
  const run = spawnSync(npm[0], [...npm[1], "run", "--silent", script], { stdio: "inherit" });
  results.push({ script, status: run.status ?? 1, seconds: (performance.now() - started) / 1000 });
}

process.stdout.write("\n── check summary\n");
for (const { script, status, seconds } of results) {
  process.stdout.write(`  ${status === 0 ? "ok  " : "FAIL"}  ${script.padEnd(18)} ${seconds.toFixed(1).padStart(5)} s\n`);
}
const failed = results.filter((r) => r.status !== 0).map((r) => r.script);
process.stdout.write(failed.length === 0 ? "  all checks passed\n" : `  failed: ${failed.join(", ")}\n`);
process.exitCode = failed.length === 0 ? 0 : 1;
