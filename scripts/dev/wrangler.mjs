// The Worker under `wrangler dev --local`, as its own process group, so that
// stopping it stops workerd and everything else wrangler started — and only
// that: other `wrangler dev` sessions on this machine are never touched.
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { delimiter, join } from "node:path";

const TAIL_LINES = 80;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawns wrangler and returns at once, so the caller can keep `stop` before
 * waiting on `ready`: an interrupt during the slow start must not leave
 * workerd behind.
 * @param {{ root: string, port: number, inspectorPort: number, vars: Record<string, string>, envFile?: string, persistTo?: string, logFile: string }} options
 */
export function spawnWrangler({ root, port, inspectorPort, vars, envFile, persistTo, logFile }) {
  const args = [
    "dev",
    "--local",
    "--ip", "127.0.0.1",
    "--port", String(port),
    // The default inspector port is fixed: another dev session on it would stop this one from starting.
    "--inspector-port", String(inspectorPort),
    "--show-interactive-dev-session=false",
    ...(envFile ? ["--env-file", envFile] : []),
    ...(persistTo ? ["--persist-to", persistTo] : []),
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  const bin = join(root, "node_modules", ".bin");
  const child = spawn(join(bin, "wrangler"), args, {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      // wrangler needs Node >= 22: the project's own Node first on PATH, as `npm run` does,
      // so that running this with the system Node 20 works too.
      PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`,
      WRANGLER_SEND_METRICS: "false",
      NO_COLOR: "1",
      FORCE_COLOR: "0",
    },
  });

  const log = createWriteStream(logFile, { flags: "w", mode: 0o600 });
  const tail = [];
  const state = { exited: /** @type {null | { code: number | null, signal: string | null } | { error: string }} */ (null) };
  let pending = "";
  const collect = (chunk) => {
    log.write(chunk);
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
    }
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve((state.exited = { code, signal })));
    child.once("error", (error) => resolve((state.exited = { error: error.message })));
  });
  const origin = `http://127.0.0.1:${port}`;
  let stopping;

  return {
    origin,
    port,
    pgid: child.pid,
    logFile,
    state,
    /** Resolves when wrangler itself exits, however that happens. */
    exited,
    logTail: (lines = 25) => tail.slice(-lines).join("\n"),
    /**
     * Resolves once the Worker serves the JWKS of `expected` (its
     * A2A_SIGNING_KEY): the proof that what answers on the port is this
     * Worker and not something left over from another session.
     * @param {{ kid: string, x: string }} expected
     */
    async ready(expected, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const url = `${origin}/.well-known/jwks.json`;
      let last = "no answer yet";
      while (Date.now() < deadline) {
        if (state.exited) throw new Error(`wrangler dev exited (${JSON.stringify(state.exited)}) before the Worker was ready; its log (${logFile}) ends:\n${tail.slice(-25).join("\n")}`);
        try {
          const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
          const body = await response.text();
          if (response.status === 200) {
            const keys = JSON.parse(body).keys ?? [];
            if (keys.some((k) => k.kid === expected.kid && k.x === expected.x)) return;
            throw new Error(`${url} serves a key other than this stack's A2A_SIGNING_KEY (kid ${expected.kid}): something else is answering on port ${port}`);
          }
          last = `HTTP ${response.status}: ${body.slice(0, 200)}`;
        } catch (error) {
          if (/something else is answering/.test(error.message)) throw error;
          last = error.cause?.code ?? error.cause?.message ?? error.message;
        }
        await sleep(250);
      }
      throw new Error(`the Worker did not serve ${url} within ${Math.round(timeoutMs / 1000)} s (last: ${last}); wrangler's log (${logFile}) ends:\n${tail.slice(-25).join("\n")}`);
    },
    /** SIGTERM to the whole group, SIGKILL if it lingers; resolves to whether anything of it is left. */
    stop() {
      stopping ??= stopGroup(child.pid, exited).finally(() => log.end());
      return stopping;
    },
  };
}

/** @returns {Promise<{ pgid: number | undefined, leftover: boolean }>} */
async function stopGroup(pgid, exited) {
  if (pgid === undefined) return { pgid, leftover: false };
  const signal = (name) => {
    try {
      process.kill(-pgid, name);
      return true;
    } catch {
      return false; // the group is gone already
    }
  };
  if (signal("SIGTERM")) {
    await Promise.race([exited, sleep(5_000)]);
    // wrangler may exit before workerd does: wait for the group, not just its leader.
    for (let i = 0; i < 30 && groupAlive(pgid); i++) await sleep(100);
    if (groupAlive(pgid)) {
      signal("SIGKILL");
      for (let i = 0; i < 20 && groupAlive(pgid); i++) await sleep(100);
    }
  }
  return { pgid, leftover: groupAlive(pgid) };
}

export function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
