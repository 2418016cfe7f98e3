// CPU time of one `wrangler dev` process group, by the part each process plays
// (bench/README.md "Floor"): the Worker's own workerd, the workerd wrangler
// puts in front of it on the public port (its proxy, which also receives every
// console line over the inspector), wrangler itself (Node), and the rest.
// Linux only (/proc); elsewhere `sample` returns null and nothing is reported.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** @typedef {{ worker: number, proxy: number, wrangler: number, other: number }} CpuByRole seconds of user + system time */

export const CPU_ROLES = /** @type {const} */ (["worker", "proxy", "wrangler", "other"]);

/** @returns {CpuByRole} */
const noCpu = () => ({ worker: 0, proxy: 0, wrangler: 0, other: 0 });

let ticksPerSecond;
const clockTicks = () => {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  return ticksPerSecond;
};

/** The role of a process of the group, from its command line; `port` is where the group answers. */
function roleOf(cmdline, port) {
  if (/\bworkerd\b/.test(cmdline)) return cmdline.includes(`127.0.0.1:${port} `) || cmdline.endsWith(`127.0.0.1:${port}`) ? "proxy" : "worker";
  if (/wrangler/.test(cmdline) && /\bnode\b/.test(cmdline)) return "wrangler";
  return "other";
}

/**
 * CPU seconds so far of every live process in process group `pgid`, by role; per pid too, so
 * that `between` counts only what a process spent between two samples.
 * @returns {{ pids: Map<number, { role: keyof CpuByRole, seconds: number }> } | null}
 */
export function sample(pgid, port) {
  if (process.platform !== "linux" || pgid === undefined) return null;
  const pids = new Map();
  const hz = clockTicks();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    let cmdline;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    } catch {
      continue; // gone meanwhile
    }
    // After "(comm)": state ppid pgrp … utime (14th field of the line) stime (15th).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    pids.set(Number(entry), { role: roleOf(cmdline, port), seconds: (Number(fields[11]) + Number(fields[12])) / hz });
  }
  return { pids };
}

/** What the group spent between two samples, by role (a process that started in between counts from zero). */
export function between(before, after) {
  if (!before || !after) return null;
  const spent = noCpu();
  for (const [pid, now] of after.pids) spent[now.role] += now.seconds - (before.pids.get(pid)?.seconds ?? 0);
  return spent;
}

/** Adds `more` into `total` (either may be null: no figures on this platform). */
export function addCpu(total, more) {
  if (!more) return total;
  const sum = total ?? noCpu();
  for (const role of CPU_ROLES) sum[role] += more[role];
  return sum;
}
