#!/usr/bin/env node
// `npm start`: the whole local stack, then a chat through the real zero-trust
// path (gatekeeper-signed token → edge → Durable Object → Workflow → signed
// push back to the gatekeeper). `npm start -- --help` lists the options.
// The tenants are the deployment's own (its tenant registry, tenants.mjs):
// here the reference's; in an author's repository `npx dynamicagents start`
// (cli/start.mjs) runs this same file with that repository as the root.
import { userInfo } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { EVENT_LINE_TYPE } from "../../src/telemetry/catalogue.ts";
import { runChat, runOnce } from "./chat.mjs";
import { serveConsole } from "./console.mjs";
import { createEventLog } from "./console-model.mjs";
import { describeEvent, parseEventLine } from "./events.mjs";
import { PinMismatch } from "./gatekeeper.mjs";
import { PortInUse } from "./http.mjs";
import { createSession } from "./session.mjs";
import { DEFAULT_PORTS, StackStopped, createStack, stackPaths } from "./stack.mjs";
import { RegistryError, describeTenants, loadTenants, unknownTenant } from "./tenants.mjs";
import { printable } from "./terminal.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

const USAGE = `Usage: npm start [-- options]   (in an author's repository: npx dynamicagents start [options])

Starts the Worker (wrangler dev --local on 127.0.0.1:8787), the local dev
gatekeeper, a dev MCP server (tools roll_dice and count_words, given to the
Worker as MCP_SERVERS, only when its code reads that) and, unless
OPENAI_BASE_URL is set, the offline stand-in model;
registers the agent and the tenants of the deployment's tenant registry
(the tenants module beside wrangler.jsonc's main, or package.json
"dynamicagents": { "tenants": "<path>" }); then opens a chat (/help lists its
commands; /new starts a new conversation; when the agent asks for an
approval, a choice or an answer, the next line is the answer). The dev
console, a page on the gatekeeper (http://127.0.0.1:8790/console), shows
your tasks, their timelines from the platform's events, and answers
requests and re-delivers dead letters.

Options:
  --once TEXT            send one turn, print the reply, stop everything;
                         exits 0 only if the task completed, 3 if the
                         agent asks for input (answer it in the chat)
  --tenant NAME          tenant to talk to, one the tenant registry serves
                         (default the first it lists)
  --timeout SECONDS      with --once: how long to wait for the reply (default 120)
  --as KEY               your identity key (default dev-<your user name>)
  --unpin                forget the agent key pinned on first use, and pin
                         the one it presents now (after you changed it)
  --port N               the Worker's port (default ${DEFAULT_PORTS.worker})
  --gatekeeper-port N    the gatekeeper's port (default ${DEFAULT_PORTS.gatekeeper}, or $GATEKEEPER_PORT)
  --model-port N         the stand-in model's port (default ${DEFAULT_PORTS.model}, or $MODEL_PORT)
  --mcp-port N           the dev MCP server's port (default ${DEFAULT_PORTS.mcp}, or $MCP_PORT)
  --standin-delay SECONDS
                         hold each stand-in answer this long (to watch
                         progress or try /cancel offline)
  --home DIR             keep everything this run creates (keys, pins, dev
                         secrets, Worker storage, logs) under DIR instead of
                         .dev/, .dev.vars and .wrangler/state
  --verbose              print each of the platform's events as it happens,
                         one line each, beside the chat
  -h, --help             this help

Environment: OPENAI_BASE_URL, OPENAI_MODEL, OPENAI_API_KEY,
OPENAI_FALLBACK_MODEL select a real OpenAI-compatible model (e.g. a local
Ollama at http://127.0.0.1:11434/v1) instead of the stand-in.`;

function fail(message, code = 2) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function port(value, name) {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) fail(`${name} must be a port number (1-65535), got ${JSON.stringify(value)}`);
  return n;
}

/**
 * The whole run: the stack, then the chat or one turn; exits the process when done.
 * @param {string} [root] the deployment's repository (default this one)
 * @param {string[]} [argv] the options (default this process's)
 */
export async function main(root = ROOT, argv = process.argv.slice(2)) {
  let args;
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        once: { type: "string" },
        tenant: { type: "string", short: "t" },
        timeout: { type: "string" },
        as: { type: "string" },
        unpin: { type: "boolean" },
        port: { type: "string" },
        "gatekeeper-port": { type: "string" },
        "model-port": { type: "string" },
        "mcp-port": { type: "string" },
        home: { type: "string" },
        "standin-delay": { type: "string" },
        verbose: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    fail(`${error.message}\n(npm start -- --help lists the options)`);
  }
  const { values, positionals } = args;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (positionals.length > 0 && values.once === undefined)
    fail(`unexpected argument ${JSON.stringify(positionals[0])}: to send one turn, use --once "text" (npm start -- --help lists the options)`);
  const onceText = values.once === undefined ? undefined : [values.once, ...positionals].join(" ").trim();
  if (onceText === "") fail("--once needs the text to send");
  const timeoutS = values.timeout === undefined ? 120 : Number(values.timeout);
  if (!(timeoutS > 0)) fail(`--timeout must be a positive number of seconds, got ${JSON.stringify(values.timeout)}`);
  const ports = {
    worker: port(values.port, "--port") ?? DEFAULT_PORTS.worker,
    gatekeeper: port(values["gatekeeper-port"], "--gatekeeper-port") ?? port(process.env.GATEKEEPER_PORT, "GATEKEEPER_PORT") ?? DEFAULT_PORTS.gatekeeper,
    model: port(values["model-port"], "--model-port") ?? port(process.env.MODEL_PORT, "MODEL_PORT") ?? DEFAULT_PORTS.model,
    mcp: port(values["mcp-port"], "--mcp-port") ?? port(process.env.MCP_PORT, "MCP_PORT") ?? DEFAULT_PORTS.mcp,
  };
  const standInDelayS = values["standin-delay"] === undefined ? 0 : Number(values["standin-delay"]);
  if (!(standInDelayS >= 0 && standInDelayS <= 600)) fail(`--standin-delay must be between 0 and 600 seconds, got ${JSON.stringify(values["standin-delay"])}`);
  const home = values.home ? resolve(values.home) : undefined;
  const user = safeUserName();
  const identity = { key: values.as ?? `dev-${user}`, name: values.as ?? user, kind: "user", workspaceId: "local-dev" };

  // --once keeps stdout for the reply alone.
  const once = onceText !== undefined;
  // Progress quotes the agent, the model endpoint and wrangler's log: shown, never obeyed by the terminal.
  const info = (line) => (once ? process.stderr : process.stdout).write(`${printable(line)}\n`);

  let exiting = false;
  let chat;
  let session;
  let devConsole;

  // The platform's events, read off wrangler's output from its first line on (the console
  // opens once the stack is up, and shows what came before too).
  const events = createEventLog();
  // --verbose prints the Worker's own events; what the gatekeeper saw (pushes, refusals) the chat shows already.
  if (values.verbose)
    events.subscribe((event) => {
      if (event.type === EVENT_LINE_TYPE) (chat ? chat.say : info)(`  [event] ${describeEvent(event)}`);
    });

  const unpinHint = [
    "npm start --",
    ...(home ? ["--home", values.home] : []),
    ...(ports.worker !== DEFAULT_PORTS.worker ? ["--port", String(ports.worker)] : []),
    "--unpin",
  ].join(" ");
  // The tenants, from the deployment's own registry, before anything starts: a wrong --tenant fails at once.
  let registry;
  try {
    registry = await loadTenants({ root, devVarsFile: stackPaths(root, home).devVarsFile });
  } catch (error) {
    fail(error instanceof RegistryError ? error.message : `could not read the tenant registry: ${error.stack ?? error}`, 1);
  }
  if (registry.served.length === 0) fail(`no tenant to talk to: ${describeTenants(registry)}`, 1);
  const tenant = values.tenant ?? registry.served[0];
  if (!registry.served.includes(tenant)) fail(unknownTenant(registry, tenant));

  const stack = createStack({
    root,
    registry,
    home,
    ports,
    identity,
    unpin: values.unpin,
    unpinHint,
    standInDelayMs: standInDelayS * 1000,
    onProgress: (line) => info(`  ${line}`),
    onWorkerLine: (line) => {
      const event = parseEventLine(line);
      if (event) events.add(event);
    },
  });

  /** Stops everything this run started, says so, and exits. Safe to call more than once. */
  async function shutdown(code, reason) {
    if (exiting) return;
    exiting = true;
    if (reason) info(reason);
    chat?.close();
    devConsole?.close();
    session?.close();
    const { pgid, leftover, servers } = await stack.stop();
    if (pgid !== undefined) {
      // Only what ran: no dev MCP server where no agent reads MCP_SERVERS, no stand-in with a real model.
      const also = servers.length ? `, ${servers.slice(0, -1).join(", ")}${servers.length > 1 ? " and " : ""}${servers.at(-1)}` : "";
      info(
        leftover
          ? `! wrangler dev's process group ${pgid} is still alive after SIGKILL: stop it with  kill -KILL -- -${pgid}`
          : `stopped wrangler dev (process group ${pgid}, nothing left)${also}`,
      );
    }
    process.exit(leftover && code === 0 ? 1 : code);
  }

  process.on("SIGINT", () => void shutdown(130, "\ninterrupted: stopping…"));
  process.on("SIGTERM", () => void shutdown(143, "terminated: stopping…"));
  process.on("SIGHUP", () => void shutdown(129));
  process.on("uncaughtException", (error) => void shutdown(1, `unexpected error: ${error.stack ?? error}`));
  process.on("unhandledRejection", (/** @type {any} */ error) => void shutdown(1, `unexpected error: ${error?.stack ?? error}`));

  info(`Dynamic Agents — local stack${once ? "" : " and chat"} (Ctrl-C stops everything)`);
  info(`  registry    ${describeTenants(registry)}`);
  let started;
  try {
    started = await stack.start();
  } catch (error) {
    if (error instanceof StackStopped) await new Promise(() => {}); // shutdown() is already exiting
    const known = error instanceof PinMismatch || error instanceof PortInUse;
    const log = stack.logTail();
    const hint =
      known || log === "" || /wrangler's log|wrangler dev exited/.test(error.message) ? "" : `\nwrangler's log (${stack.paths.logFile}) ends:\n${log}`;
    await shutdown(1, known ? `\n${error.message}` : `\ncould not start the stack: ${error.message}${hint}`);
  }
  info(`  you         ${identity.key} (user ${identity.name} of workspace ${identity.workspaceId}): every call carries a token the gatekeeper mints for you`);

  started.worker.exited.then(() => {
    if (!exiting) void shutdown(1, `\nwrangler dev exited unexpectedly; its log (${started.worker.logFile}) ends:\n${started.worker.logTail()}`);
  });

  session = createSession({ gatekeeper: started.gatekeeper, agent: started.agent, identity });
  devConsole = serveConsole({ gatekeeper: started.gatekeeper, session, tenants: started.tenants, events });
  info(`  console     ${devConsole.url}  your tasks, their timelines, answers to the agent's requests${values.verbose ? "; events also print here" : ""}`);
  if (once) {
    const code = await runOnce({ session, tenant, text: onceText, timeoutMs: timeoutS * 1000 });
    await shutdown(code);
  } else {
    info(
      `  chat        talking to ${tenant}; tenants (from ${registry.shown}): ${started.tenants.map((t) => t.tenant).join(", ")}; /tenant NAME switches, /help lists the commands`,
    );
    info("");
    chat = runChat({
      session,
      tenant,
      tenants: started.tenants.map((t) => t.tenant),
      tenantsFrom: registry.shown,
      onInterrupt: () => void shutdown(130, "\nstopping…"),
    });
    await chat.finished;
    await shutdown(0, "bye: stopping…");
  }
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) await main();

function safeUserName() {
  try {
    return userInfo().username || "developer";
  } catch {
    return "developer";
  }
}
