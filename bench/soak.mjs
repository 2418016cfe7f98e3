#!/usr/bin/env node
// `npm run bench:soak`: the kill-under-load scenario (bench/lib/kill-under-load.mjs)
// at the size: 2,000 turns from 20 callers, 16 open at a time, 10 %
// of model requests answered 500, 20 % of first push deliveries 503, the
// Worker's process group SIGKILLed at 40 % of the sends and restarted on the
// same storage. Prints the figures, writes bench/results/soak-<time>.json (every
// turn's timeline) and wrangler's logs in bench/results/soak-logs/. See
// bench/README.md "Soak and recovery" for what each figure means.
import { spawnSync } from "node:child_process";
import { mkdir, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { openFileLimit, turnBudget } from "./lib/host.mjs";
import { killUnderLoad } from "./lib/kill-under-load.mjs";
import { describeMachine } from "./lib/machine.mjs";
import { RESULTS_DIR, writeResult } from "./lib/results.mjs";
import { renderSoak } from "./lib/soak-report.mjs";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH_DIR);
const say = (line) => process.stderr.write(`${line}\n`);

function readConfig(env) {
  const number = (name, fallback, { min = 0, max = Infinity, integer = true } = {}) => {
    const value = env[name] === undefined || env[name] === "" ? fallback : Number(env[name]);
    if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
      throw new Error(`${name} must be ${integer ? "an integer" : "a number"} from ${min} to ${max}, got ${JSON.stringify(env[name])}`);
    }
    return value;
  };
  return {
    turns: number("SOAK_TURNS", 2_000, { min: 10 }),
    callers: number("SOAK_CALLERS", 20, { min: 1 }),
    concurrency: number("SOAK_CONCURRENCY", 16, { min: 1 }),
    modelFailureRate: number("SOAK_MODEL_FAILURES", 0.1, { max: 0.9, integer: false }),
    pushFailureRate: number("SOAK_PUSH_FAILURES", 0.2, { max: 1, integer: false }),
    killAt: number("SOAK_KILL_AT", 0.4, { min: 0.01, max: 0.99, integer: false }),
    seed: env.SOAK_SEED ? number("SOAK_SEED", 0) : undefined,
    recoveryWaitMs: number("SOAK_RECOVERY_WAIT_S", 600, { min: 10 }) * 1000,
    deadlineMs: number("SOAK_DEADLINE_S", 3_600, { min: 60 }) * 1000,
    stateDir: env.SOAK_STATE_DIR || undefined,
  };
}

/**
 * The restarted workerd keeps files open for every turn it finishes (see
 * bench/lib/host.mjs): when the soft open-file limit is short of what the run
 * needs and the hard limit allows more, run again under a raised one.
 */
function ensureOpenFiles(config) {
  const needed = Math.ceil(config.turns * (1 - config.killAt)) + config.concurrency;
  const { soft, hard } = openFileLimit();
  if (turnBudget(soft) >= needed || process.env.SOAK_RAISED_LIMIT) return false;
  if (turnBudget(hard) < needed)
    throw new Error(`the run needs room for ${needed} turns in one workerd; the hard open-file limit (${hard}) allows ${turnBudget(hard)}`);
  say(`Raising the open-file limit from ${soft} to ${hard} for this run`);
  const script = 'ulimit -n "$1" && shift && exec "$@"';
  const child = spawnSync("/bin/sh", ["-c", script, "sh", String(hard), process.execPath, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, SOAK_RAISED_LIMIT: "1" },
  });
  process.exitCode = child.status ?? 1;
  return true;
}

async function main() {
  const config = readConfig(process.env);
  if (ensureOpenFiles(config)) return;
  const logDir = join(RESULTS_DIR, "soak-logs");
  await rm(logDir, { recursive: true, force: true });
  await mkdir(logDir, { recursive: true });
  const scenario = killUnderLoad({ root: ROOT, ...config, logDir, say });
  const onSignal = (signal) => {
    say(`\n${signal}: stopping the worker`);
    scenario.stop().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  say(`Soak: ${config.turns} turns from ${config.callers} callers, ${config.concurrency} open at a time, seed ${scenario.seed}`);
  const run = await scenario.run();
  const results = { date: new Date().toISOString(), machine: describeMachine(ROOT), openFiles: openFileLimit(), ...run, logs: await logFindings(run.logFiles) };
  process.stdout.write(`\n${renderSoak(results)}\n`);
  say(`Wrote ${await writeResult("soak", results)}, and wrangler's logs in bench/results/soak-logs/`);
}

/**
 * What the Worker logged that bears on recovery: its own lines about turns, counted by kind, and
 * any other error line (the refused pushes are the injected 503s; wrangler's offline update
 * check is noise).
 */
async function logFindings(files) {
  /** @type {[string, RegExp][]} */
  const kinds = [
    ["turn abandoned", /abandoned after/],
    ["re-drive failed", /restart failed|could not start its Workflow/],
    ["edge: turn did not start", /did not start \(the caller's object will retry it\)/],
    ["round failed on every model", /failed on every model/],
    ["push refused (the injected 503s)", /answered HTTP 503 \(transient\)/],
    ["push given up (a dead letter)", /a dead letter/],
  ];
  /** @type {Record<string, number>} */
  const counts = Object.fromEntries(kinds.map(([name]) => [name, 0]));
  const other = new Map();
  for (const file of files) {
    const text = await readFile(file, "utf8").catch(() => "");
    for (const line of text.split("\n")) {
      const kind = kinds.find(([, pattern]) => pattern.test(line));
      if (kind) counts[kind[0]]++;
      else if (/\b(error|exception)\b/i.test(line) && !/workers\.cloudflare\.com/.test(line)) {
        const key = line
          .replace(/\x1b\[[0-9;]*m/g, "")
          .trim()
          .slice(0, 160);
        other.set(key, (other.get(key) ?? 0) + 1);
      }
    }
  }
  counts["other error lines"] = [...other.values()].reduce((a, b) => a + b, 0);
  return { files: files.map((f) => f.slice(ROOT.length + 1)), counts, otherErrors: [...other].slice(0, 10).map(([line, n]) => `${n} × ${line}`) };
}

main().catch((error) => {
  say(`bench:soak failed: ${error.stack ?? error}`);
  process.exitCode = 1;
});
