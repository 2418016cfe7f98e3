// The local stack as one reusable piece: the dev gatekeeper, the stand-in model
// (unless a real one is configured), the dev MCP server, the Worker under
// `wrangler dev --local`, and the registration of the agent and its tenants
// (those the deployment's own tenant registry serves: tenants.mjs).
// `npm start` and the e2e test both use it. `stop()` may be called at any
// moment, also while `start()` is still running, and stops exactly what this
// stack started.
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ensureDevVars, parseDotenv } from "./dev-vars.mjs";
import { ensureDir } from "./gatekeeper-state.mjs";
import { startGatekeeper } from "./gatekeeper.mjs";
import { assertPortsFree, freePort } from "./http.mjs";
import { startDevMcpServer } from "./mcp-devtools.mjs";
import { startStandInModel } from "./model-server.mjs";
import { describeTenants, loadTenants, workerReads } from "./tenants.mjs";
import { restartingWorker } from "./worker-restarts.mjs";
import { spawnWrangler } from "./wrangler.mjs";

export const DEFAULT_PORTS = { worker: 8787, gatekeeper: 8790, model: 8791, mcp: 8793 };
const READY_TIMEOUT_MS = 120_000;
const MODEL_LIST_TIMEOUT_MS = 5_000;

export class StackStopped extends Error {
  name = "StackStopped";
  constructor() {
    super("the stack was stopped while it was starting");
  }
}

/**
 * Where a stack keeps what it creates. By default the project's own places
 * (`.dev/`, `.dev.vars`, wrangler's `.wrangler/state`); with `home`,
 * everything under that one folder, for isolated runs such as the e2e test.
 * `secretsFile` holds, while wrangler runs, the secrets that came from the
 * environment (an OPENAI_API_KEY): wrangler reads them from there, never from
 * its command line.
 * @param {string} root
 * @param {string} [home]
 */
export function stackPaths(root, home) {
  if (home) {
    return {
      stateDir: home,
      gatekeeperDir: join(home, "gatekeeper"),
      devVarsFile: join(home, "dev.vars"),
      secretsFile: join(home, "wrangler-secrets.env"),
      persistTo: join(home, "wrangler-state"),
      logFile: join(home, "wrangler.log"),
    };
  }
  const stateDir = join(root, ".dev");
  return {
    stateDir,
    gatekeeperDir: join(stateDir, "gatekeeper"),
    devVarsFile: join(root, ".dev.vars"),
    secretsFile: join(stateDir, "wrangler-secrets.env"),
    persistTo: undefined,
    logFile: join(stateDir, "wrangler.log"),
  };
}

/**
 * @typedef {{ key: string, name?: string, kind?: string, workspaceId?: string }} Identity
 * @typedef {{
 *   root: string,
 *   home?: string,
 *   ports?: Partial<typeof DEFAULT_PORTS>,
 *   env?: Record<string, string | undefined>,
 *   registry?: import("./tenants.mjs").Registry,
 *   identity: Identity,
 *   unpin?: boolean,
 *   unpinHint?: string,
 *   standInDelayMs?: number,
 *   onProgress?: (line: string) => void,
 *   onWorkerLine?: (line: string) => void,
 *   readyTimeoutMs?: number,
 * }} StackOptions
 *   `onWorkerLine`: each line of wrangler's output as it comes (the dev console reads the events in it)
 *   `registry`: the deployment's tenants, read already (start.mjs reads it first, to check --tenant);
 *   without it the stack reads it itself (tenants.mjs)
 */

/** @param {StackOptions} options */
export function createStack(options) {
  const root = options.root;
  const paths = stackPaths(root, options.home);
  const ports = { ...DEFAULT_PORTS, ...options.ports };
  const env = options.env ?? process.env;
  const progress = options.onProgress ?? (() => {});
  const rel = (path) => relative(process.cwd(), path) || ".";

  /** @type {Awaited<ReturnType<typeof startGatekeeper>> | undefined} */
  let gatekeeper;
  /** @type {Awaited<ReturnType<typeof startStandInModel>> | undefined} */
  let standIn;
  /** @type {Awaited<ReturnType<typeof startDevMcpServer>> | undefined} */
  let mcp;
  /** @type {ReturnType<typeof restartingWorker<ReturnType<typeof spawnWrangler>>> | undefined} */
  let worker;
  let stopped = false;
  const check = () => {
    if (stopped) throw new StackStopped();
  };

  /** Starts everything; on any failure stops what it had started before rethrowing. */
  async function start() {
    try {
      return await startAll();
    } catch (error) {
      await stop();
      throw error;
    }
  }

  async function startAll() {
    check();
    // The dev MCP server is the Worker's MCP_SERVERS: started, and mentioned, only when some agent reads that.
    const mcpWanted = await workerReads(root, "MCP_SERVERS");
    check();
    // Every port before anything starts: one run names each that is taken, with the flag that moves it.
    await assertPortsFree([
      { port: ports.worker, what: "the Worker", flag: "--port" },
      { port: ports.gatekeeper, what: "the dev gatekeeper", flag: "--gatekeeper-port" },
      ...(standInWanted(env, paths.devVarsFile) ? [{ port: ports.model, what: "the stand-in model", flag: "--model-port" }] : []),
      ...(mcpWanted ? [{ port: ports.mcp, what: "the dev MCP server", flag: "--mcp-port" }] : []),
    ]);
    ensureDir(paths.stateDir);

    gatekeeper = await startGatekeeper({ stateDir: paths.gatekeeperDir, port: ports.gatekeeper, unpinHint: options.unpinHint });
    check();
    progress(`gatekeeper  ${gatekeeper.origin}  (key ${gatekeeper.kid}${gatekeeper.keyCreated ? ", new" : ""}; state in ${rel(paths.gatekeeperDir)})`);

    const devVars = await ensureDevVars(paths.devVarsFile, { gatekeeperOrigin: gatekeeper.origin });
    check();
    if (devVars.created) progress(`dev secrets ${rel(devVars.file)} created: a fresh A2A_SIGNING_KEY (kid ${devVars.signingKey.kid}) and GATEKEEPER_ORIGINS`);
    else if (devVars.added.length) progress(`dev secrets ${rel(devVars.file)}: added ${devVars.added.join(", ")}`);

    // GATEKEEPER_ORIGINS: what the file lists, plus this gatekeeper (a --var wins over the file).
    const listed = devVars.gatekeeperOrigins ?? [];
    const origins = listed.includes(gatekeeper.origin) ? listed : [...listed, gatekeeper.origin];
    if (!listed.includes(gatekeeper.origin))
      progress(`note        ${gatekeeper.origin} is not in GATEKEEPER_ORIGINS of ${rel(devVars.file)}: added for this run`);
    // The dev console builds each task's timeline from every event: the reference agents then log one line per event.
    const vars = { GATEKEEPER_ORIGINS: JSON.stringify(origins), EVENT_LINES: "1" };
    /** @type {Record<string, string>} */
    let secrets = {};

    const model = await chooseModel(env, devVars.vars);
    check();
    if (model.kind === "stand-in") {
      standIn = await startStandInModel({ port: ports.model, delayMs: options.standInDelayMs });
      check();
      Object.assign(vars, { OPENAI_BASE_URL: standIn.baseUrl, OPENAI_MODEL: standIn.model });
      model.baseUrl = standIn.baseUrl;
      model.model = standIn.model;
      model.delayMs = options.standInDelayMs;
      // Offline, the agents read pages from the stand-in only (unless the dev secrets choose sites).
      if (!devVars.vars.FETCH_ALLOWLIST) vars.FETCH_ALLOWLIST = JSON.stringify([standIn.origin]);
    } else {
      Object.assign(vars, model.vars);
      secrets = model.secrets ?? {};
    }
    progress(`model       ${describeModel(model)}`);
    if (vars.FETCH_ALLOWLIST) progress(`pages       the agents may read pages from the stand-in only (FETCH_ALLOWLIST ${vars.FETCH_ALLOWLIST})`);

    // The dev MCP server runs whichever model answers: the tools are the agent's, not the model's.
    if (mcpWanted) {
      mcp = await startDevMcpServer({ port: ports.mcp });
      check();
      Object.assign(vars, mcpVars(mcp, devVars.vars));
      progress(`mcp         ${describeMcp(mcp, vars, devVars.vars, rel(devVars.file))}`);
    }

    const inspectorPort = await freePort();
    check();
    const readyWithin = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
    worker = restartingWorker({
      spawn: (onLine) =>
        spawnWrangler({
          root,
          port: ports.worker,
          inspectorPort,
          vars,
          secrets,
          // The dev secrets file (A2A_SIGNING_KEY…), then the secrets of this run, which win.
          envFiles: [paths.devVarsFile],
          secretsFile: paths.secretsFile,
          persistTo: paths.persistTo,
          logFile: paths.logFile,
          onLine,
        }),
      ready: (spawned) => spawned.ready(devVars.signingKey, readyWithin),
      onLine: options.onWorkerLine,
      onRestart: (phase, detail) =>
        progress(
          phase === "restarting"
            ? `worker      out of open files (local workerd keeps some for every finished turn): restarting wrangler dev on the same state…`
            : phase === "restarted"
              ? `worker      ${worker?.origin} is back; turns it cut off are re-driven by their caller's object`
              : `worker      did not come back: ${detail}`,
        ),
    });
    progress(`worker      ${worker.origin}  starting wrangler dev --local (log: ${rel(paths.logFile)})…`);
    await worker.ready();
    check();

    if (options.unpin && gatekeeper.unpin(worker.origin))
      progress(`unpinned    forgot the key pinned for ${worker.origin}; the key it presents now is pinned below`);
    const agent = await gatekeeper.registerAgent(worker.origin);
    check();
    progress(
      agent.firstSight
        ? `registered  ${agent.origin}: card key ${agent.pin.kid} pinned on first use (${agent.pin.thumbprint})`
        : `registered  ${agent.origin}: card key ${agent.pin.kid} matches the pin of ${agent.pin.pinnedAt}`,
    );
    const registry = options.registry ?? (await loadTenants({ root, devVarsFile: paths.devVarsFile }));
    check();
    if (!options.registry) progress(`registry    ${describeTenants(registry)}`);
    const cards = [];
    for (const tenant of registry.served) {
      const { card } = await gatekeeper.registerTenant(agent.origin, tenant, options.identity);
      check();
      cards.push({ tenant, name: card.name, description: card.description });
    }
    progress(`tenants     ${cards.map((c) => `${c.tenant} (${c.name})`).join(", ")}: signed cards verified against the pin`);
    return { gatekeeper, agent, worker, model, tenants: cards, registry, paths };
  }

  /**
   * Stops everything this stack started; resolves to wrangler's process group,
   * whether anything of it is left, and the servers it stopped besides (in
   * words). Safe to call again, also while `start()` runs: what starts after a
   * stop is stopped by `start()` itself.
   */
  async function stop() {
    stopped = true;
    const result = worker ? await worker.stop() : { pgid: undefined, leftover: false };
    const servers = [gatekeeper && "the gatekeeper", standIn && "the stand-in model", mcp && "the dev MCP server"].filter((s) => typeof s === "string");
    await Promise.all([gatekeeper?.close(), standIn?.close(), mcp?.close()]);
    return { ...result, servers };
  }

  /** The end of wrangler's output so far ("" before it started): for error messages. */
  const logTail = (lines = 15) => worker?.logTail(lines) ?? "";

  return { start, stop, logTail, paths, ports };
}

/**
 * Whether the stand-in model will be started (no OPENAI_BASE_URL in the
 * environment or the dev secrets file, as {@link chooseModel} decides),
 * read before anything starts so its port is checked with the others.
 * @param {Record<string, string | undefined>} env @param {string} devVarsFile
 */
function standInWanted(env, devVarsFile) {
  if (env.OPENAI_BASE_URL) return false;
  return !(existsSync(devVarsFile) && parseDotenv(readFileSync(devVarsFile, "utf8")).OPENAI_BASE_URL);
}

/**
 * Which model the Worker will use. A real one when OPENAI_BASE_URL is set
 * (in the environment or in the dev secrets file); otherwise the stand-in.
 * What the environment sets is passed on: the key and the base URL (which
 * may carry credentials) as `secrets`, model names as `vars`.
 * @returns {Promise<{ kind: "stand-in" | "openai-compatible", baseUrl?: string, model?: string, source?: string, vars?: Record<string, string>, secrets?: Record<string, string>, delayMs?: number }>}
 */
export async function chooseModel(env, devVars) {
  const fromEnv = (name) => (env[name] ? env[name] : undefined);
  const baseUrl = fromEnv("OPENAI_BASE_URL") ?? devVars.OPENAI_BASE_URL;
  if (!baseUrl) return { kind: "stand-in" };
  const source = fromEnv("OPENAI_BASE_URL") ? "environment" : "dev secrets";
  // fetch refuses a URL with a user or password, quoting it whole in its error: say so without quoting it.
  let parsed;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new Error(`OPENAI_BASE_URL (from the ${source}) is not a URL`);
  }
  if (parsed.username || parsed.password)
    throw new Error(`OPENAI_BASE_URL (from the ${source}) holds a user or password before the host: put the key in OPENAI_API_KEY instead`);
  /** @type {Record<string, string>} */
  const vars = {};
  /** @type {Record<string, string>} */
  const secrets = {};
  // What is in the dev secrets file reaches the Worker anyway; pass what came from the environment.
  for (const name of ["OPENAI_MODEL", "OPENAI_FALLBACK_MODEL"]) {
    const value = fromEnv(name);
    if (value) vars[name] = value;
  }
  for (const name of ["OPENAI_BASE_URL", "OPENAI_API_KEY"]) {
    const value = fromEnv(name);
    if (value) secrets[name] = value;
  }
  let model = fromEnv("OPENAI_MODEL") ?? devVars.OPENAI_MODEL;
  let picked = false;
  if (!model) {
    model = await firstListedModel(baseUrl, fromEnv("OPENAI_API_KEY") ?? devVars.OPENAI_API_KEY);
    vars.OPENAI_MODEL = model;
    picked = true;
  }
  return {
    kind: "openai-compatible",
    baseUrl,
    model,
    source: picked ? `${source}; first model the endpoint lists, set OPENAI_MODEL to choose` : source,
    vars,
    secrets,
  };
}

async function firstListedModel(baseUrl, apiKey) {
  const url = `${baseUrl.replace(/\/+$/, "")}/models`;
  try {
    const response = await fetch(url, {
      headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(MODEL_LIST_TIMEOUT_MS),
    });
    const body = /** @type {any} */ (await response.json());
    const id = body?.data?.[0]?.id;
    if (response.ok && typeof id === "string") return id;
    throw new Error(`HTTP ${response.status}, no model listed`);
  } catch (error) {
    throw new Error(
      `OPENAI_BASE_URL is set (${shownUrl(baseUrl)}) but OPENAI_MODEL is not, and ${shownUrl(url)} could not be listed (${error.cause?.code ?? error.cause?.message ?? error.message}): set OPENAI_MODEL to the model to use`,
    );
  }
}

/**
 * MCP_SERVERS and MCP_ALLOWLIST for the Worker (the reference assistant reads
 * them, and a starter's MCP tenants: src/mcp.ts): the dev MCP server, its own harmless tools trusted by name (an MCP
 * tool not named so waits for an approval at every call: docs/mcp.md), each
 * unless the dev secrets file sets it, whose value wins as for FETCH_ALLOWLIST.
 * @param {{ name: string, url: string, origin: string, tools: string[] }} mcp
 * @param {Record<string, string>} devVars
 * @returns {Record<string, string>}
 */
export function mcpVars(mcp, devVars) {
  /** @type {Record<string, string>} */
  const vars = {};
  if (!devVars.MCP_SERVERS) vars.MCP_SERVERS = JSON.stringify([{ name: mcp.name, url: mcp.url, trustedTools: mcp.tools }]);
  if (!devVars.MCP_ALLOWLIST) vars.MCP_ALLOWLIST = JSON.stringify([mcp.origin]);
  return vars;
}

/** The progress line's words: which MCP servers the agents that read MCP_SERVERS are given, and from where. */
function describeMcp(mcp, vars, devVars, file) {
  const tools = `tools ${mcp.tools.join(", ")}`;
  if (vars.MCP_SERVERS) {
    const allowlist = vars.MCP_ALLOWLIST ? `MCP_ALLOWLIST ${vars.MCP_ALLOWLIST}` : `MCP_ALLOWLIST of ${file}`;
    return `the agents that read MCP_SERVERS use the dev MCP server ${mcp.name} at ${mcp.url}, ${tools} (MCP_SERVERS; ${allowlist})`;
  }
  return `the agents that read MCP_SERVERS use the MCP servers of ${file} (${serverNames(devVars.MCP_SERVERS)}); the dev MCP server ${mcp.name} runs at ${mcp.url} too, ${tools}`;
}

/** The names of MCP_SERVERS' entries, for the progress line; the config itself checks the rest at the agent's start. */
function serverNames(raw) {
  try {
    const servers = JSON.parse(raw);
    if (Array.isArray(servers)) return servers.map((s) => (typeof s?.name === "string" ? s.name : "?")).join(", ") || "none";
  } catch {
    // said below
  }
  return "MCP_SERVERS is not a JSON array: the agents that read it will refuse to start";
}

function describeModel(model) {
  if (model.kind === "stand-in") {
    return `offline stand-in model at ${model.baseUrl}${model.delayMs ? ` (answering after ${model.delayMs / 1000} s)` : ""} — deterministic, no network; every reply starts with "[offline stand-in model]". Set OPENAI_BASE_URL (and OPENAI_MODEL) for a real model.`;
  }
  return `${model.model} at ${shownUrl(model.baseUrl)} (OpenAI-compatible; from the ${model.source})`;
}

/** A URL as it may be printed: its query and fragment (where a gateway's key often rides) shown as `?…`. */
function shownUrl(url) {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}${parsed.search || parsed.hash ? "?…" : ""}`;
  } catch {
    return "(not a URL)";
  }
}
