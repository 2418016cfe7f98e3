// Local workerd keeps files open for every finished Workflow instance and,
// after some thousands of turns, runs out of them (the process's hard limit on
// open files; wrangler.mjs raises the soft one to it). `npm start` recovers:
// on wrangler's first line saying so, the process is stopped and started again
// on the same port and the same state, so the chat goes on and the caller's
// object re-drives whatever turn the failure cut off (docs: README "Local work").

/** What workerd prints when it is out of file descriptors (the C library's words, or the errno name). */
export const OUT_OF_FILES = /too many open files|\bEMFILE\b/i;

/**
 * A Worker process that is started again when it runs out of open files.
 * `spawn(onLine)` starts one (a `spawnWrangler` result) whose every output
 * line goes to `onLine`; `ready(worker)` waits until it serves. The result
 * looks like one process: `exited` resolves only when a process ends that is
 * not being replaced, `stop` stops the current one, `restarts` counts.
 * @template {{ exited: Promise<unknown>, stop: () => Promise<any>, origin: string, logFile?: string, logTail: (lines?: number) => string }} W
 * @param {{ spawn: (onLine: (line: string) => void) => W, ready: (worker: W) => Promise<unknown>,
 *   onLine?: (line: string) => void, onRestart?: (phase: "restarting" | "restarted" | "failed", detail?: string) => void }} options
 */
export function restartingWorker({ spawn, ready, onLine, onRestart = () => {} }) {
  /** @type {Promise<void> | undefined} */
  let recovery;
  let stopped = false;
  let restarts = 0;
  const lineOf = (line) => {
    onLine?.(line);
    if (!recovery && !stopped && OUT_OF_FILES.test(line)) recovery = restart(line).finally(() => (recovery = undefined));
  };
  let current = spawn(lineOf);

  async function restart(line) {
    onRestart("restarting", line);
    await current.stop();
    if (stopped) return;
    current = spawn(lineOf);
    restarts++;
    try {
      await ready(current);
      onRestart("restarted");
    } catch (error) {
      onRestart("failed", error instanceof Error ? error.message : String(error));
    }
  }

  const exited = (async () => {
    for (;;) {
      const worker = current;
      const result = await worker.exited;
      if (recovery) await recovery;
      if (worker === current || stopped) return result;
    }
  })();

  return {
    get current() {
      return current;
    },
    get origin() {
      return current.origin;
    },
    get logFile() {
      return current.logFile;
    },
    get restarts() {
      return restarts;
    },
    logTail: (lines) => current.logTail(lines),
    ready: () => ready(current),
    exited,
    stop: async () => {
      stopped = true;
      if (recovery) await recovery;
      return current.stop();
    },
  };
}
