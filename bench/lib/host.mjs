import { execFileSync } from "node:child_process";
import { accessSync, constants, readFileSync, statfsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { endpointOf } from "../../src/a2a/wire.ts";
import { groupAlive, raisedFileLimit } from "../../scripts/dev/wrangler.mjs";
import { a2aCaller } from "./a2a.mjs";
import { sleep } from "./net.mjs";
import { spawnWorker } from "./worker.mjs";

/** Open files a finished turn leaves in workerd: its Workflow instance's SQLite (db, -wal, -shm), measured at 3.2. */
const FDS_PER_TURN = 3.5;
/** Of workerd's open-file limit, what turns may use; the rest is for sockets, Durable Objects, wrangler. */
const FD_SHARE_FOR_TURNS = 0.7;
/** Storage a turn leaves behind, mostly its Workflow instance's SQLite: measured at ~0.29 MiB, with room to spare. */
const BYTES_PER_TURN = 0.45 * 2 ** 20;

/**
 * The Worker under test, over one or more `wrangler dev` processes on the
 * same storage. Locally, every Workflow instance is a Durable Object with its
 * own SQLite file that workerd keeps open for as long as it runs (idle ones
 * are not closed): ~3 open files per turn, so a single workerd runs out of
 * file descriptors after a few thousand turns (SQLITE_CANTOPEN, then every
 * SendMessage fails). `restart` starts a fresh process on the same storage,
 * which opens only what it touches; the bench calls it, with every turn
 * settled, whenever the next batch of turns would not fit (`turnRoom`).
 *
 * The storage is a throw-away directory, on tmpfs (/dev/shm) where there is
 * one with room for `expectedTurns`: the bench measures the Worker, not the
 * fsyncs of the disk under a local SQLite file. wrangler's local trace
 * collector (every invocation's tail events written to SQLite, for the local
 * explorer) is switched off for the same reason: it is dev tooling with no
 * part in what a request costs.
 *
 * `kill` is the crash instead of the orderly restart: SIGKILL to the whole
 * process group mid-whatever, then a fresh process on the same port and
 * storage (lib/kill-under-load.mjs). With `logDir`, each process's wrangler output is
 * kept there as `wrangler-<n>.log`.
 * @param {{ root: string, vars: Record<string, string>, secrets: Record<string, string> & { A2A_SIGNING_KEY: string },
 *   gatekeeper: { tokenFor: (audience: string, identityKey: string) => () => Promise<string> }, expectedTurns: number,
 *   stateDir?: string, turnsPerWorker?: number, logDir?: string, config?: string }} options
 *   `config`: another Worker's wrangler config (the floor worker's, bench/floor/wrangler.jsonc); the project's by default.
 */
export async function createHost({ root, vars, secrets, gatekeeper, stateDir, turnsPerWorker, expectedTurns, logDir, config }) {
  const base = stateDir ?? defaultStateDir(expectedTurns * BYTES_PER_TURN);
  const persistTo = await mkdtemp(join(base, "a2a-bench-"));
  const env = { X_LOCAL_OBSERVABILITY: "false" };
  const budget = turnsPerWorker ?? turnBudget();
  const stats = { workers: 0, reloads: 0, sendMessages: 0 };
  /** @type {Awaited<ReturnType<typeof spawnWorker>> | null} */
  let worker = null;
  let turnsHere = 0;
  /** The running process (a caller must not ask between a stop and the next start). */
  const running = () => {
    if (!worker) throw new Error("no workerd is running");
    return worker;
  };

  const logFiles = [];
  /**
   * @param {number} [port] where to answer; a free port when absent
   * @param {boolean} [retried] this is the second try after a port clash
   */
  const spawn = async (port, retried = false) => {
    const logFile = logDir ? join(logDir, `wrangler-${stats.workers + 1}.log`) : undefined;
    if (logFile) logFiles.push(logFile);
    const started = await spawnWorker({ root, vars, secrets, persistTo, env, port, logFile, config });
    worker = started;
    stats.workers++;
    turnsHere = 0;
    try {
      await started.ready(120_000); // `stop` works meanwhile: a Ctrl-C during the slow start-up stops it
    } catch (error) {
      // Another process took one of its ports between the probe and wrangler's bind (scripts/dev/http.mjs
      // freePort): once more, on a fresh inspector port and the same `port`.
      if (!retried && started.state.exited && /Address already in use/.test(started.logTail())) {
        worker = null;
        await started.stop();
        return spawn(port, true);
      }
      throw error;
    }
    // One verified call before any burst: a cold isolate hit by n verified calls at once fetches
    // the gatekeeper's JWKS n times (on Workers, jose does not share a pending fetch across
    // requests), which would blur what the JWKS count says about the cache.
    const endpoint = endpointOf(started.origin);
    try {
      await a2aCaller({ origin: started.origin, token: gatekeeper.tokenFor(endpoint, "bench-first-call") }).call("GetExtendedAgentCard", {});
    } catch (error) {
      throw new Error(`a verified call to ${endpoint} failed, so the token setup is wrong (aud, jku or GATEKEEPER_ORIGINS): ${error.message}`);
    }
  };
  const stopWorker = async () => {
    if (!worker) return;
    const w = worker;
    stats.reloads += w.state.reloads;
    worker = null;
    await w.stop();
  };

  return {
    stats,
    persistTo,
    stateDir: base,
    /** Starts the first process; `stop` (register it first) stops whichever is running, also mid-start. */
    start: spawn,
    turnBudget: budget,
    get worker() {
      return worker;
    },
    get origin() {
      return running().origin;
    },
    reloads: () => stats.reloads + (worker?.state.reloads ?? 0),
    logTail: () => worker?.logTail() ?? "",
    /** Turns this process can still start before its open files run short. */
    turnRoom: () => budget - turnsHere,
    /** A caller of the current process (its origin is the token's audience); every SendMessage it sends is counted. */
    callerFor: async (key) => {
      const { origin } = running();
      const caller = a2aCaller({ origin, token: gatekeeper.tokenFor(endpointOf(origin), key) });
      const send = caller.sendMessage;
      caller.sendMessage = async (...args) => {
        turnsHere++; // counted before the reply: a failed call may still have started a turn
        const result = await send(...args);
        stats.sendMessages++;
        return result;
      };
      return caller;
    },
    /** Stops the current process and starts a fresh one on the same storage (a new port, so new callers). */
    restart: async () => {
      await stopWorker();
      await spawn();
    },
    /**
     * SIGKILLs the running process's whole group (wrangler, workerd, the
     * Workflows engine in it) with no warning, and resolves once it is gone;
     * `start(port)` then brings a fresh one up on the same port and storage,
     * so callers' tokens (whose `aud` names the port) stay valid.
     */
    kill: async () => {
      const w = running();
      stats.reloads += w.state.reloads;
      worker = null;
      const pgid = /** @type {number} */ (w.pid);
      process.kill(-pgid, "SIGKILL");
      for (let i = 0; i < 100 && groupAlive(pgid); i++) await sleep(100);
      if (groupAlive(pgid)) throw new Error(`process group ${pgid} outlived SIGKILL by 10 s`);
      await w.stop(); // nothing left to signal: removes its secrets file and closes its log
      return w.port;
    },
    /** wrangler's output of each process so far, in order (with `logDir`). */
    logFiles,
    stop: async () => {
      await stopWorker();
      await rm(persistTo, { recursive: true, force: true });
    },
    /** MiB of storage the run has written (Durable Objects and Workflow instances). */
    storageMiB: () => {
      try {
        return Math.round(Number(execFileSync("du", ["-sk", persistTo], { encoding: "utf8", timeout: 30_000 }).split("\t")[0]) / 1024);
      } catch {
        return null;
      }
    },
  };
}

function defaultStateDir(neededBytes) {
  try {
    accessSync("/dev/shm", constants.W_OK);
    const { bavail, bsize } = statfsSync("/dev/shm");
    if (bavail * bsize >= neededBytes) return "/dev/shm";
  } catch {
    // no tmpfs there
  }
  return tmpdir();
}

/**
 * Turns one workerd can run, from the open-file limit it starts with (or
 * `limit`): the launcher raises its soft limit to the hard one
 * (`withRaisedFileLimit` in scripts/dev/wrangler.mjs), so the limit a process
 * spawned that way sees, else this process's own soft limit.
 */
export function turnBudget(limit = raisedFileLimit() ?? openFileLimit().soft) {
  return Math.max(100, Math.floor((limit * FD_SHARE_FOR_TURNS) / FDS_PER_TURN));
}

/** This process's open-file limit, soft and hard; the common default where /proc does not say. */
export function openFileLimit() {
  const number = (v) => (v === "unlimited" ? 1_000_000 : Number(v) || 1024);
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const [, soft, hard] = line?.split(/\s{2,}/) ?? []; // "Max open files  <soft>  <hard>  files"
    return { soft: number(soft), hard: number(hard) };
  } catch {
    return { soft: 1024, hard: 1024 }; // not Linux: assume the common default
  }
}
