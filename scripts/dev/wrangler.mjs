// The Worker under `wrangler dev --local`, as its own process group, so that
// stopping it stops workerd and everything else wrangler started — and only
// that: other `wrangler dev` sessions on this machine are never touched.
import { execFileSync, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { jwksUrlOf } from "../../src/a2a/wire.ts";
import { formatEnvFile } from "./dev-vars.mjs";

const TAIL_LINES = 80;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Names that say "secret": refused as `--var`, which any local user reads in `ps` and wrangler prints at start. */
const SECRET_NAME = /key|secret|token|password|credential|auth/i;
/** wrangler logs a line per request: noise in the tail shown when something went wrong. */
const REQUEST_LINE = /^\[wrangler:info\] (GET|POST|PUT|DELETE|HEAD|OPTIONS|PATCH) \S+ \d{3}/;

/**
 * What keeps wrangler from reaching out at all (README "Offline"): at every start it would fetch
 * `Request.cf` data from workers.cloudflare.com (the Worker reads none of it: miniflare's placeholder
 * does), its banner asks registry.npmjs.org for a newer wrangler, and it may send usage metrics.
 * Every wrangler the project's own scripts start gets these.
 */
export const WRANGLER_OFFLINE_ENV = Object.freeze({
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
  WRANGLER_SEND_METRICS: "false",
});

/**
 * The arguments of `wrangler dev --local`. Only non-secret `vars` go on the
 * command line; secrets reach the Worker through `envFiles` (later files win;
 * with none given, wrangler reads the project's `.dev.vars` itself). `config`:
 * another Worker's wrangler config file (`--config`, e.g. the bench's floor
 * worker); by default wrangler reads the project's own wrangler.jsonc.
 * @param {{ port: number, inspectorPort: number, vars?: Record<string, string>, envFiles?: string[], persistTo?: string, config?: string }} options
 * @returns {string[]}
 */
export function wranglerArgs({ port, inspectorPort, vars = {}, envFiles = [], persistTo, config }) {
  for (const name of Object.keys(vars)) {
    if (SECRET_NAME.test(name)) throw new TypeError(`${name} looks like a secret: pass it in \`secrets\` (an env file), never as --var on the command line`);
  }
  return [
    "dev",
    ...(config ? ["--config", config] : []),
    "--local",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    // The default inspector port is fixed: another dev session on it would stop this one from starting.
    "--inspector-port",
    String(inspectorPort),
    "--show-interactive-dev-session=false",
    ...envFiles.flatMap((file) => ["--env-file", file]),
    ...(persistTo ? ["--persist-to", persistTo] : []),
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
}

/**
 * Spawns wrangler and returns at once, so the caller can keep `stop` before
 * waiting on `ready`: an interrupt during the slow start must not leave
 * workerd behind.
 *
 * `secrets` are written to `secretsFile` (mode 0600; by default in a fresh
 * private temporary folder) and passed as the last `--env-file`, after
 * `envFiles`; the file is removed by `stop`. It stays while wrangler runs:
 * wrangler reads it again when it reloads the Worker.
 *
 * wrangler starts with its open-file soft limit raised to the hard limit
 * (`withRaisedFileLimit`): local workerd keeps files open for every finished
 * Workflow instance, and runs out of them after a few thousand turns.
 * @param {{ root: string, port: number, inspectorPort: number, vars?: Record<string, string>, secrets?: Record<string, string>, envFiles?: string[], secretsFile?: string, persistTo?: string, config?: string, logFile?: string, env?: Record<string, string>, onLine?: (line: string) => void }} options
 *   `env`: more environment for wrangler (e.g. X_LOCAL_OBSERVABILITY).
 *   `onLine`: every whole line wrangler prints (stdout or stderr), as it comes: the Worker's
 *   console.log lines, its events among them, pass through unchanged (scripts/dev/events.mjs).
 */
export function spawnWrangler({
  root,
  port,
  inspectorPort,
  vars = {},
  secrets = {},
  envFiles = [],
  secretsFile,
  persistTo,
  config,
  logFile,
  env = {},
  onLine,
}) {
  const written = writeSecrets(secrets, secretsFile);
  let args;
  try {
    args = wranglerArgs({ port, inspectorPort, vars, envFiles: written ? [...envFiles, written.file] : envFiles, persistTo, config });
  } catch (error) {
    written?.remove();
    throw error;
  }
  const bin = join(root, "node_modules", ".bin");
  // The shell execs wrangler: one process, the group's leader, so `pgid` and `stop` are unchanged.
  const child = spawn(...withRaisedFileLimit(join(bin, "wrangler"), args), {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      // wrangler needs Node >= 22: the project's own Node first on PATH, as `npm run` does,
      // so that running this with the system Node 20 works too.
      PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`,
      ...WRANGLER_OFFLINE_ENV,
      // wrangler otherwise appends every line it prints, each event of the Worker among them, to a
      // debug file of its own in the user's home, one file write per line (under the floor bench, about
      // 40% of its CPU); the launcher keeps wrangler's output itself (`logFile`, `logTail`).
      WRANGLER_WRITE_LOGS: process.env.WRANGLER_WRITE_LOGS ?? "false",
      // Without it wrangler ignores --env-file, and the Worker would start without its secrets.
      CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: "true",
      ...env,
      NO_COLOR: "1",
      FORCE_COLOR: "0",
    },
  });

  const logName = logFile ? `wrangler's log (${logFile})` : "wrangler's output";
  const log = logFile ? createWriteStream(logFile, { flags: "w", mode: 0o600 }) : undefined;
  const tail = [];
  const state = {
    exited: /** @type {null | { code: number | null, signal: string | null } | { error: string }} */ (null),
    /** wrangler rebuilds on any source change: a reload mid-run means a cold isolate and maybe other code. */
    reloads: 0,
  };
  const noteLine = (line) => {
    if (/reloading local server/i.test(line)) state.reloads++;
    if (onLine) {
      try {
        onLine(line);
      } catch {
        // A reader's failure must not stop wrangler's output from being read.
      }
    }
    if (!line.trim() || REQUEST_LINE.test(line)) return;
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
  };
  // One reader per stream: a stderr chunk landing mid-line must not split a stdout line (an event).
  for (const stream of [child.stdout, child.stderr]) {
    let pending = "";
    // Decoded per stream, so a character split across two chunks stays whole.
    stream.setEncoding("utf8");
    stream.on("data", (chunk) => {
      log?.write(chunk);
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) noteLine(line.replace(/\r$/, ""));
    });
  }
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
      const url = jwksUrlOf(origin);
      let last = "no answer yet";
      while (Date.now() < deadline) {
        if (state.exited)
          throw new Error(`wrangler dev exited (${JSON.stringify(state.exited)}) before the Worker was ready; ${logName} ends:\n${tail.slice(-25).join("\n")}`);
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
      throw new Error(
        `the Worker did not serve ${url} within ${Math.round(timeoutMs / 1000)} s (last: ${last}); ${logName} ends:\n${tail.slice(-25).join("\n")}`,
      );
    },
    /** SIGTERM to the whole group, SIGKILL if it lingers; resolves to whether anything of it is left. */
    stop() {
      stopping ??= stopGroup(child.pid, exited).finally(() => {
        log?.end();
        written?.remove();
      });
      return stopping;
    },
  };
}

/**
 * `command` with `args`, run by a POSIX shell that first raises the open-file
 * soft limit to the hard limit and then execs it (same process, same group,
 * same arguments, nothing on the command line added but the wrapper). Where
 * the hard limit is `unlimited` (macOS) and the kernel refuses it, the soft
 * limit stays as it was. Returns `[file, argv]` for `spawn`.
 * @param {string} command
 * @param {string[]} args
 * @returns {[string, string[]]}
 */
export function withRaisedFileLimit(command, args) {
  return ["/bin/sh", ["-c", RAISE_FILE_LIMIT, "sh", command, ...args]];
}

const RAISE_FILE_LIMIT = 'ulimit -S -n "$(ulimit -H -n)" 2>/dev/null || true; exec "$@"';

/**
 * The open-file soft limit a process spawned through `withRaisedFileLimit`
 * starts with (`Infinity` for unlimited), or undefined where no shell answers.
 * @returns {number | undefined}
 */
export function raisedFileLimit() {
  try {
    const [file, argv] = withRaisedFileLimit("/bin/sh", ["-c", "ulimit -S -n"]);
    const out = execFileSync(file, argv, { encoding: "utf8", timeout: 10_000 }).trim();
    if (out === "unlimited") return Infinity;
    const value = Number(out);
    return Number.isInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes `secrets` for `--env-file`, readable by this user only; undefined when there are none.
 * @param {Record<string, string>} secrets
 * @param {string | undefined} file  where; by default a fresh private temporary folder, removed with it
 */
function writeSecrets(secrets, file) {
  if (Object.keys(secrets).length === 0) return undefined;
  const text = formatEnvFile(secrets);
  const dir = file ? undefined : mkdtempSync(join(tmpdir(), "wrangler-secrets-"));
  const path = file ?? join(/** @type {string} */ (dir), "secrets.env");
  // Removed first: a file left by an earlier run may have other permissions, and `mode` applies only on creation.
  rmSync(path, { force: true });
  writeFileSync(path, text, { mode: 0o600, flag: "wx" });
  return { file: path, remove: () => rmSync(dir ?? path, { recursive: true, force: true }) };
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
