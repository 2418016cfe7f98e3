// The bench's CPU-by-process figures (bench/lib/process-cpu.mjs): a process group's
// time is read from /proc, by the part each process plays, and only what a
// process spent between two samples counts.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { addCpu, between, sample } from "../../bench/lib/process-cpu.mjs";

const linux = process.platform === "linux";
/** @template T @param {T | null} value @returns {T} */
const present = (value) => {
  if (value === null) throw new Error("no figures: /proc could not be read");
  return value;
};

describe("CPU by process of a wrangler dev group", () => {
  it.runIf(linux)("counts a busy process of the group, and nothing of a process outside it", async () => {
    // Its own process group, as the launcher starts wrangler: the group's id is the child's pid.
    const busy = spawn(process.execPath, ["-e", "const end = Date.now() + 400; while (Date.now() < end);"], { detached: true, stdio: "ignore" });
    try {
      const before = sample(busy.pid, 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const after = present(sample(busy.pid, 1));
      expect([...after.pids.keys()]).toEqual([busy.pid]);
      const spent = present(between(before, after));
      expect(spent.other).toBeGreaterThan(0); // a clock tick or more, however busy the machine
      expect(spent.worker + spent.proxy + spent.wrangler).toBe(0);
      // No process has that group: nothing of this test runner, or of anything else, is counted.
      expect(present(sample(999_999_999, 1)).pids.size).toBe(0);
    } finally {
      busy.kill();
      await once(busy, "exit").catch(() => {});
    }
  });

  it("counts a process from zero when it started between the samples, and adds sides up", () => {
    const before = { pids: new Map([[1, { role: "worker", seconds: 2 }]]) };
    const after = {
      pids: new Map([
        [1, { role: "worker", seconds: 2.5 }],
        [2, { role: "proxy", seconds: 0.25 }],
      ]),
    };
    expect(between(before, after)).toEqual({ worker: 0.5, proxy: 0.25, wrangler: 0, other: 0 });
    expect(between(null, after)).toBeNull();
    expect(addCpu(addCpu(null, between(before, after)), { worker: 1, proxy: 0, wrangler: 1, other: 0 })).toEqual({
      worker: 1.5,
      proxy: 0.25,
      wrangler: 1,
      other: 0,
    });
    expect(addCpu(null, null)).toBeNull();
  });
});
