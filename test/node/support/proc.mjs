// What `ps` shows every local user: each process's command line, read from
// /proc (Linux). A secret found there has leaked.
import { readFileSync, readdirSync } from "node:fs";

export const canReadCommandLines = (() => {
  try {
    readFileSync("/proc/self/cmdline");
    return true;
  } catch {
    return false;
  }
})();

/** The processes whose command line contains `secret`, as "pid: command line". */
export function commandLinesHolding(secret) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let cmdline;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    if (cmdline.includes(secret)) found.push(`${pid}: ${cmdline.replaceAll("\0", " ").slice(0, 200)}`);
  }
  return found;
}
