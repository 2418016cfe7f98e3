import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, release, totalmem, type } from "node:os";
import { join } from "node:path";

/** Enough about the machine and the software to tell two runs' figures apart. */
export function describeMachine(root) {
  return {
    nproc: nproc(),
    cpuModel: cpus()[0]?.model?.trim() ?? "unknown",
    totalMemoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${type()} ${release()}`,
    node: process.version,
    wrangler: packageVersion(root, "wrangler"),
    workerd: packageVersion(root, "workerd"),
    commit: gitCommit(root),
  };
}

/** `nproc` honours CPU affinity and cgroup quotas the way the shell user sees them; fall back to Node's view. */
function nproc() {
  try {
    return Number(execFileSync("nproc", { encoding: "utf8", timeout: 2_000 }).trim());
  } catch {
    return availableParallelism();
  }
}

function packageVersion(root, name) {
  try {
    return JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return "unknown";
  }
}

/** The commit measured, and whether the code differs from it (bench/ and test/ do not count: they measure, they are not measured). */
function gitCommit(root) {
  const git = (...args) => execFileSync("git", args, { cwd: root, encoding: "utf8", timeout: 5_000, stdio: ["ignore", "pipe", "ignore"] }).trim();
  try {
    const commit = git("rev-parse", "--short", "HEAD");
    const dirty = git("status", "--porcelain", "--", ".", ":(exclude)bench", ":(exclude)test", ":(exclude)node_modules") !== "";
    return dirty ? `${commit} + uncommitted changes` : commit;
  } catch {
    return null; // no commit yet, or not a checkout
  }
}

/** One-minute load average per CPU above which the machine is not idle enough to compare runs. */
const BUSY_LOAD_PER_CPU = 0.5;

/**
 * Why the machine is not idle, before a run starts (empty when it is): a load
 * average over the threshold, or workerd processes already running (another
 * bench, a test run); ratios taken meanwhile move with it.
 */
export function busyWarnings() {
  const out = [];
  const cpus = nproc();
  const [load] = loadavg();
  if (load > BUSY_LOAD_PER_CPU * cpus) out.push(`the machine is not idle: load average ${load.toFixed(2)} over ${cpus} CPUs`);
  const workerds = workerdProcesses();
  if (workerds > 0) out.push(`${workerds} workerd process(es) already running: another bench or test run shares the CPUs`);
  return out;
}

/** workerd processes on the machine (Linux: /proc; elsewhere none are seen). */
function workerdProcesses() {
  let count = 0;
  let pids = [];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd") count++;
    } catch {
      // gone meanwhile
    }
  }
  return count;
}
