#!/usr/bin/env node
// `npm run conformance`: the public A2A conformance suite against the reference
// deployment, offline, as docs/conformance.md describes it: the suite prepared
// from its pinned copy, the Worker under `wrangler dev --local` with the
// `conformance` tenant, the conformance proxy in front, the suite on each
// binding the Worker serves (JSON-RPC, then HTTP+JSON). Fails on any MUST
// requirement the suite marks FAIL on either that docs/conformance.md does
// not list, with its reason, as the suite's own mistake.
import { spawn } from "node:child_process";
import { copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { freePort } from "../dev/http.mjs";
import { spawnWrangler } from "../dev/wrangler.mjs";
import { freshSigningJwk } from "../keys.mjs";
import { CONFORMANCE_TENANT, startConformanceProxy } from "./proxy.mjs";
import { judge, knownMistakesIn, summaryLines } from "./report.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const DOC = join(root, "docs", "conformance.md");
const LOGS = join(root, ".test-output", "conformance");
const DEFAULT_SETUP = resolve(root, "..", "shared", "conformance", "setup.sh");
const WORKER_READY_MS = 120_000;
/** The suite's name of each binding the Worker serves (its --transport), with the card's. */
const BINDINGS = [
  { transport: "jsonrpc", name: "JSON-RPC" },
  { transport: "http_json", name: "HTTP+JSON" },
];
/** A whole run takes a few minutes; a suite stuck on a stream must not hold CI for its 90. */
const SUITE_TIMEOUT_MS = 30 * 60_000;

const USAGE = `Usage: npm run conformance [-- options]

Runs the public A2A conformance suite (a2a-tck) against the reference Worker's
"${CONFORMANCE_TENANT}" tenant through the conformance proxy, all on 127.0.0.1,
offline, on JSON-RPC and on HTTP+JSON. Fails on a MUST requirement that fails
on either and is not listed in docs/conformance.md "The suite's mistakes".

Options:
  --setup PATH   the suite's setup script (default ${DEFAULT_SETUP};
                 or A2A_TCK_SETUP)
  --suite DIR    a copy of the suite it prepared before, reused (or TCK_WORK)
  -h, --help     this help
`;

const { values } = parseArgs({
  options: {
    setup: { type: "string", default: process.env.A2A_TCK_SETUP ?? DEFAULT_SETUP },
    suite: { type: "string", default: process.env.TCK_WORK },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const say = (line) => process.stdout.write(`conformance: ${line}\n`);
const fail = (message) => {
  process.stderr.write(`conformance: ${message}\n`);
  process.exitCode = 1;
};

/**
 * Runs `command`, its output passed through (or, with `capture`, its stdout kept); resolves to its
 * exit code and what it printed, or rejects past `timeoutMs`.
 * @param {string} command @param {string[]} args
 * @param {{ cwd: string, env?: Record<string, string>, capture?: boolean, timeoutMs?: number }} options
 * @returns {Promise<{ code: number, out: string }>}
 */
function run(command, args, { cwd, env = {}, capture = false, timeoutMs }) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", capture ? "pipe" : "inherit", "inherit"] });
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk) => (out += chunk));
    const timer = timeoutMs
      ? setTimeout(() => (child.kill("SIGTERM"), reject(new Error(`${command} ran past ${timeoutMs / 60_000} minutes`))), timeoutMs)
      : undefined;
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 128 : 1), out });
    });
  });
}

// 1. The suite, prepared (a venv from the machine's local wheel index) or reused.
if (!existsSync(values.setup)) {
  fail(`no suite setup script at ${values.setup}: pass --setup (see docs/conformance.md)`);
  process.exit();
}
const setup = await run("bash", [values.setup], { cwd: root, env: values.suite ? { TCK_WORK: values.suite } : {}, capture: true });
const suiteDir = setup.out.trim().split("\n").at(-1);
if (setup.code !== 0 || !suiteDir || !existsSync(join(suiteDir, "run_tck.py"))) {
  fail(`${values.setup} failed (exit ${setup.code}); it printed ${JSON.stringify(setup.out.slice(-500))}`);
  process.exit();
}
say(`suite at ${suiteDir}`);

// 2. The proxy first (its origin is the Worker's gatekeeper), then the Worker.
// Their logs stay in .test-output/conformance/ (git-ignored) for a failed run to be read.
mkdirSync(LOGS, { recursive: true });
const proxyLog = createWriteStream(join(LOGS, "proxy.log"), { flags: "w" });
const port = await freePort();
const proxy = await startConformanceProxy({ upstream: `http://127.0.0.1:${port}`, port: 0, log: (line) => proxyLog.write(`${line}\n`) });
const signing = await freshSigningJwk();
const scratch = mkdtempSync(join(tmpdir(), "a2a-conformance-"));
const worker = spawnWrangler({
  root,
  port,
  inspectorPort: await freePort(),
  vars: { CONFORMANCE: "1", GATEKEEPER_ORIGINS: JSON.stringify([proxy.origin]) },
  secrets: { A2A_SIGNING_KEY: JSON.stringify(signing) },
  persistTo: join(scratch, "state"),
  logFile: join(LOGS, "wrangler.log"),
});
const stop = async () => {
  await proxy.close().catch(() => {});
  await worker.stop().catch(() => {});
  proxyLog.end();
  rmSync(scratch, { recursive: true, force: true });
  // A copy made for this run goes with it (its report is in LOGS); one given with --suite stays.
  if (!values.suite) rmSync(suiteDir, { recursive: true, force: true });
};
process.once("SIGINT", () => stop().then(() => process.exit(130)));
process.once("SIGTERM", () => stop().then(() => process.exit(143)));

const started = Date.now();
try {
  await worker.ready(signing, WORKER_READY_MS);
  say(`Worker ${worker.origin} (CONFORMANCE=1), proxy ${proxy.origin}, caller ${proxy.identity.key}`);

  // 3. The suite, once per binding, one after the other against the same Worker and proxy.
  const known = knownMistakesIn(DOC);
  const failed = [];
  for (const { transport, name } of BINDINGS) {
    const reportFile = join(suiteDir, "reports", "compatibility.json");
    rmSync(reportFile, { force: true });
    const suiteStarted = Date.now();
    const suite = await run(join(suiteDir, ".venv", "bin", "python"), ["run_tck.py", "--sut-host", proxy.origin, "--transport", transport], {
      cwd: suiteDir,
      timeoutMs: SUITE_TIMEOUT_MS,
    });
    const minutes = ((Date.now() - suiteStarted) / 60_000).toFixed(1);
    if (!existsSync(reportFile)) throw new Error(`the suite wrote no ${reportFile} on ${name} (exit ${suite.code})`);
    copyFileSync(reportFile, join(LOGS, `compatibility-${transport}.json`));

    // 4. The verdict: MUST failures against the documented list.
    const verdict = judge(JSON.parse(readFileSync(reportFile, "utf8")), known);
    say(`${name}: the suite ran ${minutes} min (exit ${suite.code}; it fails on any FAIL, listed ones included)`);
    for (const line of summaryLines(verdict)) say(`${name}: ${line}`);
    if (!verdict.ok) failed.push(`${verdict.unexpected.length} on ${name}`);
  }
  say(`${proxy.pushes.length} pushes relayed or taken`);
  if (failed.length) fail(`MUST requirement(s) failed that docs/conformance.md does not list as the suite's mistakes: ${failed.join(", ")}`);
  else say(`no MUST failure outside docs/conformance.md's list on either binding (${Math.round((Date.now() - started) / 1000)} s in all)`);
} catch (error) {
  fail(`${error.message}\nwrangler's output ends:\n${worker.logTail(30)}`);
} finally {
  await stop();
}
