import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, release, totalmem, type } from "node:os";
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
