// npm start's recovery when local workerd runs out of open files
// (scripts/dev/worker-restarts.mjs): fake processes stand in for wrangler, so
// the rule is seen directly — one restart per failure, on its first line, and
// an end that is not a restart still ends the stack.
import { describe, expect, it } from "vitest";
import { OUT_OF_FILES, restartingWorker } from "../../scripts/dev/worker-restarts.mjs";

/** A fake wrangler process: `say` prints a line, `die` ends it, `stop` ends it as asked. */
function fakeProcesses() {
  const spawned = [];
  const spawn = (onLine) => {
    let end;
    const exited = new Promise((resolve) => (end = resolve));
    const worker = {
      n: spawned.length + 1,
      origin: "http://127.0.0.1:8787",
      logFile: undefined,
      stopped: false,
      exited,
      logTail: () => `log of process ${worker.n}`,
      say: (line) => onLine(line),
      die: (code) => end({ code, signal: null }),
      stop: async () => {
        worker.stopped = true;
        end({ code: null, signal: "SIGTERM" });
        return { pgid: worker.n, leftover: false };
      },
    };
    spawned.push(worker);
    return worker;
  };
  return { spawned, spawn };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("npm start's worker restarts", () => {
  it("knows workerd's out-of-files line, and no other", () => {
    expect(OUT_OF_FILES.test("workerd/util/sqlite.c++:123: failed: open(): Too many open files")).toBe(true);
    expect(OUT_OF_FILES.test("Error: EMFILE: too many open files, open '/x'")).toBe(true);
    expect(OUT_OF_FILES.test("[wrangler:info] POST /a2a 200 OK (12ms)")).toBe(false);
  });

  it("restarts once on the first out-of-files line, on the same origin, and goes on as one process", async () => {
    const { spawned, spawn } = fakeProcesses();
    const seen = [];
    const phases = [];
    const worker = restartingWorker({ spawn, ready: async () => {}, onLine: (line) => seen.push(line), onRestart: (phase) => phases.push(phase) });
    let ended = false;
    void worker.exited.then(() => (ended = true));
    spawned[0].say("Too many open files");
    spawned[0].say("Too many open files (again, while stopping)");
    await settle();
    expect(spawned).toHaveLength(2);
    expect(spawned[0].stopped).toBe(true);
    expect(worker.restarts).toBe(1);
    expect(phases).toEqual(["restarting", "restarted"]);
    // Every line still reaches the stack's own listener.
    expect(seen).toHaveLength(2);
    // The replaced process's end is not the stack's end.
    expect(ended).toBe(false);
    expect(worker.logTail()).toBe("log of process 2");

    // A process that dies of something else ends it.
    spawned[1].die(1);
    expect(await worker.exited).toEqual({ code: 1, signal: null });
    expect(spawned).toHaveLength(2);
  });

  it("does not restart after a stop, and stop ends the current process", async () => {
    const { spawned, spawn } = fakeProcesses();
    const worker = restartingWorker({ spawn, ready: async () => {} });
    await worker.stop();
    spawned[0].say("EMFILE");
    await settle();
    expect(spawned).toHaveLength(1);
    expect(await worker.exited).toEqual({ code: null, signal: "SIGTERM" });
  });

  it("says so when the new process does not come up, and its end ends the stack", async () => {
    const { spawned, spawn } = fakeProcesses();
    const phases = [];
    let calls = 0;
    const worker = restartingWorker({
      spawn,
      ready: async () => {
        calls++;
        throw new Error("did not serve its JWKS");
      },
      onRestart: (phase, detail) => phases.push([phase, detail]),
    });
    spawned[0].say("Too many open files");
    await settle();
    expect(calls).toBe(1);
    expect(phases.at(-1)).toEqual(["failed", "did not serve its JWKS"]);
    spawned[1].die(2);
    expect(await worker.exited).toEqual({ code: 2, signal: null });
  });
});
