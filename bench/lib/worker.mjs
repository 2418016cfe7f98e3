import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort, sleep } from "./net.mjs";

const LOG_LINES = 60;

/**
 * Spawns the reference Worker under `wrangler dev --local`, exactly as the
 * external checks start it, in its own process group so that stopping it also
 * stops workerd and anything else wrangler spawned. Returns at once, so the
 * caller can register `stop` before waiting on `ready`: a Ctrl-C during the
 * slow start-up must not leave workerd behind.
 *
 * Durable Object storage goes to a fresh temporary directory: every run starts
 * from empty callers, and the bench never writes into a developer's
 * `.wrangler/state`. Pass `persistTo` to start on the storage of an earlier
 * worker instead (its owner removes it); otherwise `stop` removes it.
 */
export async function spawnWorker({ root, vars, persistTo: given, env = {} }) {
  const port = await freePort();
  const inspectorPort = await freePort();
  const persistTo = given ?? (await mkdtemp(join(tmpdir(), "a2a-bench-")));
  const args = [
    "dev",
    "--local",
    "--ip", "127.0.0.1",
    "--port", String(port),
    // wrangler's default inspector port is fixed; another dev session on it would stop this one from starting.
    "--inspector-port", String(inspectorPort),
    "--persist-to", persistTo,
    "--show-interactive-dev-session=false",
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  // The project's own wrangler (what `npx wrangler` resolves to), without npx's lookup.
  const child = spawn(join(root, "node_modules", ".bin", "wrangler"), args, {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      // wrangler runs on whatever `node` is first on PATH and needs Node >= 22: put the project's
      // own Node first, as `npm run` does, so running this file with an older system Node still works.
      PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`,
      WRANGLER_SEND_METRICS: "false",
      ...env,
      NO_COLOR: "1",
      FORCE_COLOR: "0",
    },
  });

  const log = [];
  // wrangler rebuilds on any source change; a reload mid-run means a cold
  // isolate and possibly different code, so the report must say so.
  const state = { reloads: 0, exited: null };
  const collect = (chunk) => {
    for (const line of chunk.toString().split("\n")) {
      // One line per request drowns whatever went wrong: the tail keeps everything else.
      if (!line.trim() || /^\[wrangler:info\] (GET|POST) \S+ \d{3}/.test(line)) continue;
      log.push(line);
      if (log.length > LOG_LINES) log.shift();
      if (/reloading local server/i.test(line)) state.reloads++;
    }
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve((state.exited = { code, signal })));
    child.once("error", (error) => resolve((state.exited = { error: error.message })));
  });

  const worker = {
    port,
    origin: `http://127.0.0.1:${port}`,
    persistTo,
    pid: child.pid,
    state,
    logTail: () => log.join("\n"),
    ready: (timeoutMs) => waitUntilReady(worker, timeoutMs),
    stop: () => stopGroup(child, exited).finally(() => (given ? undefined : rm(persistTo, { recursive: true, force: true }))),
  };
  return worker;
}

async function waitUntilReady(worker, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  const url = `${worker.origin}/.well-known/jwks.json`;
  while (Date.now() < deadline) {
    if (worker.state.exited) {
      throw new Error(`wrangler dev exited (${JSON.stringify(worker.state.exited)}) before it was ready:\n${worker.logTail()}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`wrangler dev did not answer ${url} within ${timeoutMs} ms:\n${worker.logTail()}`);
}

/** SIGTERM to the whole group, SIGKILL if it lingers: workerd must not outlive the bench. */
async function stopGroup(child, exited) {
  if (child.pid === undefined) return;
  const signalGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
      return true;
    } catch {
      return false; // the group is already gone
    }
  };
  if (!signalGroup("SIGTERM")) return;
  await Promise.race([exited, sleep(5_000)]);
  // wrangler may exit before workerd does: wait for the group, not just the leader.
  for (let i = 0; i < 20 && groupAlive(child.pid); i++) await sleep(100);
  if (groupAlive(child.pid)) signalGroup("SIGKILL");
}

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
