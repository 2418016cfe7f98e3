// `npx dynamicagents start` (the starter's `npm start`): the local stack of
// this package's scripts/dev (the Worker under `wrangler dev --local`, the dev
// gatekeeper, the stand-in model, the dev MCP server (when a tenant reads
// MCP_SERVERS), the chat and the dev
// console) for the repository it runs in, with the tenants of that
// repository's own tenant registry. Options as `npm start -- --help` lists them.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { register } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** wrangler (and Node's own type stripping, which this repository's sources need) want Node 22 or later. */
const NODE_MAJOR = 22;

/**
 * The repository to run: the nearest folder from `dir` up that holds a package.json.
 * @param {string} dir
 */
function repositoryRoot(dir) {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(join(at, "package.json"))) return at;
    if (dirname(at) === at) throw new Error(`no package.json in ${resolve(dir)} or above it: run \`dynamicagents start\` inside the repository of your agents`);
  }
}

/** @param {string[]} argv the options after `start` */
export async function start(argv) {
  const root = repositoryRoot(process.cwd());
  // An older Node (npx from a system Node 20): the repository's own Node 24, as its npm scripts run.
  const own = join(root, "node_modules", ".bin", "node");
  if (Number(process.versions.node.split(".")[0]) < NODE_MAJOR && existsSync(own)) return rerun(own, argv);
  // The package ships dist/, not src/: scripts/dev's imports of src/ load their dist/ twins.
  register("../scripts/dev/from-dist.mjs", import.meta.url);
  const { main } = await import("../scripts/dev/start.mjs");
  await main(root, argv);
}

/** This command again on `node`, the terminal's signals going to it alone; exits as it exits. */
function rerun(node, argv) {
  const main = fileURLToPath(new URL("./main.mjs", import.meta.url));
  const child = spawn(node, [main, "start", ...argv], { stdio: "inherit" });
  // Ctrl-C reaches the child too (same process group): it stops the stack and exits.
  for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM", "SIGHUP"])) process.on(signal, () => child.kill(signal));
  return new Promise(() => child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0))));
}
