import { execFileSync } from "node:child_process";
import { accessSync, constants, readFileSync, statfsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { endpointOf } from "../../src/a2a/wire.ts";
import { a2aCaller } from "./a2a.mjs";
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
 */
export async function createHost({ root, vars, secrets, gatekeeper, stateDir, turnsPerWorker, expectedTurns }) {
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

  const spawn = async () => {
    const started = await spawnWorker({ root, vars, secrets, persistTo, env });
    worker = started;
    stats.workers++;
    turnsHere = 0;
    await started.ready(120_000); // `stop` works meanwhile: a Ctrl-C during the slow start-up stops it
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

/** Turns one workerd can run, from the open-file limit it inherits from this process. */
function turnBudget() {
  let limit = 1024;
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1]; // "Max open files  <soft>  <hard>  files"
    limit = soft === "unlimited" ? 1_000_000 : Number(soft) || limit;
  } catch {
    // not Linux: assume the common default
  }
  return Math.max(100, Math.floor((limit * FD_SHARE_FOR_TURNS) / FDS_PER_TURN));
}
