import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../scripts/dev/http.mjs";
import { spawnWrangler } from "../../scripts/dev/wrangler.mjs";

/**
 * Spawns the reference Worker under `wrangler dev --local` with the launcher
 * `npm start` uses (its own process group, secrets through a private env file,
 * never on the command line). Returns at once, so the caller can register
 * `stop` before waiting on `ready`: a Ctrl-C during the slow start-up must not
 * leave workerd behind.
 *
 * Durable Object storage goes to a fresh temporary directory: every run starts
 * from empty callers, and the bench never writes into a developer's
 * `.wrangler/state`. Pass `persistTo` to start on the storage of an earlier
 * worker instead (its owner removes it); otherwise `stop` removes it. Pass
 * `port` to answer where an earlier worker did (a free one otherwise), and
 * `logFile` to keep wrangler's whole output, `config` to start another
 * Worker than the reference one (its wrangler config file, e.g. the floor's).
 * @param {{ root: string, vars: Record<string, string>, secrets: Record<string, string> & { A2A_SIGNING_KEY: string }, persistTo?: string, env?: Record<string, string>, port?: number, logFile?: string, config?: string }} options
 */
export async function spawnWorker({ root, vars, secrets, persistTo: given, env = {}, port: fixedPort, logFile, config }) {
  const port = fixedPort ?? (await freePort());
  const inspectorPort = await freePort();
  const persistTo = given ?? (await mkdtemp(join(tmpdir(), "a2a-bench-")));
  const wrangler = spawnWrangler({ root, port, inspectorPort, vars, secrets, persistTo, env, logFile, config });
  const { kid, x } = JSON.parse(secrets.A2A_SIGNING_KEY);
  return {
    port,
    /** The Worker's isolate over the Chrome DevTools protocol (lib/profile.mjs). */
    inspectorPort,
    origin: wrangler.origin,
    persistTo,
    pid: wrangler.pgid,
    /** `exited` once wrangler is gone; `reloads`: how often it rebuilt the Worker (a source file changed). */
    state: wrangler.state,
    logTail: () => wrangler.logTail(60),
    /** Resolves once this Worker serves its own signing key. */
    ready: (timeoutMs) => wrangler.ready({ kid, x }, timeoutMs),
    stop: () => wrangler.stop().finally(() => (given ? undefined : rm(persistTo, { recursive: true, force: true }))),
  };
}
