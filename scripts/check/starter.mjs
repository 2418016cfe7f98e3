#!/usr/bin/env node
// `npm run check:starter`: the proof that the package works outside this
// repository, as a newcomer meets it in README.md "Your first agent", with
// nothing of the checkout on PATH or in npm's environment:
//
//   1. the clone route, exactly as the README writes it (starter-route.mjs),
//      this checkout being the clone: `npm install`, `npm pack` (prepack builds
//      dist/), `node cli/main.mjs new … --core file:<the tarball>`, the new
//      repository's `npm install` and `npm test`. The one change: the new
//      repository goes into a temporary folder, not beside the checkout
//   2. its `npm run check`, and our declarations checked strictly (skipLibCheck off)
//   3. `npx wrangler deploy --dry-run`, and `npm start -- --once "hello"` (the
//      whole local stack, `dynamicagents start`, offline: the stand-in model
//      calls the starter's tool; no tenant reads MCP servers, so no dev MCP server)
//   4. `npx dynamicagents add-tenant weather`, a custom tool of under forty
//      lines (starter-newcomer.mjs), then `npm run check` and `npm test` again,
//      and `npm start -- --once` at both tenants (the stand-in calls `forecast`)
//   5. `add-tenant research --round` (a delegating tenant: its subagent class in
//      vitest.config.ts's additionalExports) and `add-tenant travel --mcp` (its
//      tools from an MCP server), their generated specs passing in `npm test`,
//      and `npm start -- --once` at each (a subtask run in a subagent under
//      wrangler; the dev MCP server's tools, now that a tenant reads MCP_SERVERS)
//   6. the peers at the highest versions their ranges allow, then check and test
//   7. the published route's command from the tarball (`npx --legacy-peer-deps
//      --package=… dynamicagents new`, as on Node 20): the bin of an installed package
//
//   node scripts/check/starter.mjs [--keep]      --keep leaves the folder (and the tarball) for a look
//
// Installs go to the npm cache first (prefer-offline, as CI's `npm ci` fills
// it) and to the registry for the rest; step 6 needs the registry.
//
// Exit 0 when every step passed; otherwise 1, with the failed step's output.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../dev/http.mjs";
import { TENANT, writeNewcomerCode } from "./starter-newcomer.mjs";
import { readCloneRoute } from "./starter-route.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const MAX_NEWCOMER_LINES = 40;
/** The tenants step 5 adds, as README.md "Your first agent" names them. */
const ROUND_TENANT = "research";
const MCP_TENANT = "travel";
const keep = process.argv.includes("--keep");
const read = (file) => readFileSync(join(ROOT, file), "utf8");
const own = JSON.parse(read("package.json"));

/**
 * A shell as a newcomer has it: no npm_* settings of the `npm run` that started us, nothing of the
 * checkout on PATH; npm takes what its cache holds before asking the registry.
 */
const outside = {
  ...Object.fromEntries(
    Object.entries(process.env)
      .filter(([name]) => !/^npm_/i.test(name) && name !== "INIT_CWD")
      .map(([name, value]) => [
        name,
        name === "PATH"
          ? value
              .split(delimiter)
              .filter((dir) => !`${dir}${sep}`.startsWith(`${ROOT}${sep}`))
              .join(delimiter)
          : value,
      ]),
  ),
  npm_config_prefer_offline: "true",
  npm_config_audit: "false",
  npm_config_fund: "false",
};

const timings = [];

/** Runs one step; its output is shown only if it fails (or `tolerate` says the failure is expected). */
function step(label, command, args, { cwd, env = outside, tolerate = false } = {}) {
  process.stdout.write(`── ${label}\n`);
  const started = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", fail);
    child.on("close", (code) => {
      const seconds = (performance.now() - started) / 1000;
      timings.push([label, seconds]);
      if (code === 0 || tolerate) return done({ code, output });
      process.stdout.write(`${output}\n`);
      fail(new Error(`${label}: \`${command} ${args.join(" ")}\` exited ${code} after ${seconds.toFixed(1)} s`));
    });
  });
}

/**
 * `npm start -- --once TEXT` in the starter, on free ports, its state under `work`: exit 0, the
 * stand-in's reply and the stack's lines holding each of `expected` and none of `absent`.
 */
async function onceTurn(label, starter, work, text, expected, { extra = [], absent = [] } = {}) {
  const ports = [await freePort(), await freePort(), await freePort(), await freePort()];
  const args = ["start", "--silent", "--", "--home", join(work, "stack"), "--port", String(ports[0]), "--gatekeeper-port", String(ports[1])];
  args.push("--model-port", String(ports[2]), "--mcp-port", String(ports[3]), "--once", text, ...extra);
  const run = await step(label, "npm", args, { cwd: starter });
  const missing = expected.filter((part) => !run.output.includes(part));
  if (missing.length) throw new Error(`${label}: the output lacks ${missing.map((m) => JSON.stringify(m)).join(", ")}:\n${run.output}`);
  const there = absent.filter((part) => run.output.includes(part));
  if (there.length) throw new Error(`${label}: the output holds ${there.map((m) => JSON.stringify(m)).join(", ")}:\n${run.output}`);
}

/** The tarball step 1's `npm pack` wrote into the checkout, and whether it is new there (then it goes at the end). */
const packed = { tarball: "", created: false };

/**
 * Step 1: README.md's clone route, command by command, in this checkout; the new repository's
 * folder (as the route's `new` names it) moved into `work`. Returns the new repository's path.
 */
async function cloneRoute(work) {
  const route = readCloneRoute(join(ROOT, "README.md"));
  const made = route.flatMap((c) => ("run" in c ? (/\bnew\s+(\S+)/.exec(c.run)?.[1] ?? []) : []))[0];
  if (!made) throw new Error("README.md's clone route makes no repository (`… new DIR …`)");
  const starter = join(work, "my-agents");
  const moved = (text) => text.split(made).join(starter);
  const before = { manifest: read("package.json"), lock: read("package-lock.json") };
  let cwd = ROOT;
  // What `npm pack` is about to write is ours to remove at the end only if it was not there before.
  packed.created = !existsSync(join(ROOT, `${own.name.replace("@", "").replace("/", "-")}-${own.version}.tgz`));
  for (const command of route) {
    if ("cd" in command) {
      cwd = resolve(cwd, moved(command.cd));
      continue;
    }
    const run = await step(command.run, "bash", ["-c", moved(command.run)], { cwd });
    if (cwd !== ROOT) continue;
    if (read("package.json") !== before.manifest)
      throw new Error(`package.json differs after \`${command.run}\`: postpack did not restore it (node scripts/package/manifest.mjs source)`);
    if (read("package-lock.json") !== before.lock) {
      writeFileSync(join(ROOT, "package-lock.json"), before.lock);
      throw new Error(`\`${command.run}\` in the clone changed package-lock.json (restored): the README's route would leave a clone changed`);
    }
    if (/^npm pack\b/.test(command.run)) {
      const name = run.output.trim().split("\n").pop() ?? "";
      if (!name.endsWith(".tgz")) throw new Error(`\`${command.run}\` named no tarball:\n${run.output}`);
      packed.tarball = join(ROOT, name);
    }
  }
  if (!existsSync(join(starter, "node_modules"))) throw new Error(`README.md's clone route did not install the new repository at ${made}`);
  return starter;
}

async function main(work) {
  const starter = await cloneRoute(work);
  await step("npm run check", "npm", ["run", "check"], { cwd: starter });
  const strict = await step("our declarations, skipLibCheck off", "npx", ["tsc", "--noEmit", "--skipLibCheck", "false"], { cwd: starter, tolerate: true });
  const ours = strict.output.split("\n").filter((line) => line.includes(`node_modules/${own.name}/`));
  if (ours.length) throw new Error(`the package's declarations do not type-check in a consumer:\n${ours.join("\n")}`);
  await step("npx wrangler deploy --dry-run", "npx", ["wrangler", "deploy", "--dry-run", "--outdir", join(work, "dry-run")], { cwd: starter });
  await onceTurn(
    'npm start -- --once "hello"',
    starter,
    work,
    "hello",
    ["[offline stand-in model]", "registry    src/tenants.ts (beside wrangler.jsonc's main src/worker.ts) serves assistant", "I called lookup, which returned"],
    // No tenant reads MCP servers yet: no dev MCP server, and not a word of one.
    { absent: ["mcp         ", "MCP server"] },
  );

  await step(`npx dynamicagents add-tenant ${TENANT}`, "npx", ["dynamicagents", "add-tenant", TENANT], { cwd: starter });
  const lines = writeNewcomerCode(starter);
  if (lines >= MAX_NEWCOMER_LINES) throw new Error(`the newcomer's custom tool took ${lines} lines, not under ${MAX_NEWCOMER_LINES}`);
  process.stdout.write(`── a custom tool for ${TENANT}: ${lines} lines of the newcomer's own\n`);
  await step("npm run check (two tenants)", "npm", ["run", "check"], { cwd: starter });
  await step("npm test (two tenants)", "npm", ["test"], { cwd: starter });
  await onceTurn('npm start -- --once "hello" (two tenants)', starter, work, "hello", [
    `src/tenants.ts (beside wrangler.jsonc's main src/worker.ts) serves assistant, ${TENANT}`,
    "I called lookup",
  ]);
  await onceTurn(
    `npm start -- --once "Paris" --tenant ${TENANT}`,
    starter,
    work,
    "Paris",
    ['I called forecast, which returned {"city":"Paris","forecast":"sunny, 21 °C"}'],
    {
      extra: ["--tenant", TENANT],
    },
  );

  await step(`npx dynamicagents add-tenant ${ROUND_TENANT} --round`, "npx", ["dynamicagents", "add-tenant", ROUND_TENANT, "--round"], { cwd: starter });
  await step(`npx dynamicagents add-tenant ${MCP_TENANT} --mcp`, "npx", ["dynamicagents", "add-tenant", MCP_TENANT, "--mcp"], { cwd: starter });
  await step("npm run check (four tenants)", "npm", ["run", "check"], { cwd: starter });
  const tested = await step("npm test (four tenants: the generated round and MCP specs)", "npm", ["test"], { cwd: starter });
  for (const spec of [`test/${ROUND_TENANT}.spec.ts`, `test/${MCP_TENANT}.spec.ts`]) {
    if (!tested.output.includes(spec)) throw new Error(`npm test did not run ${spec}:\n${tested.output}`);
  }
  await onceTurn(
    `npm start -- --once "Paris" --tenant ${ROUND_TENANT}`,
    starter,
    work,
    "Paris",
    ["1 delegated subtask reported", "nothing yet about Paris: this recipe is a skeleton"],
    { extra: ["--tenant", ROUND_TENANT] },
  );
  await onceTurn(
    `npm start -- --once "count these words" --tenant ${MCP_TENANT}`,
    starter,
    work,
    "count these words",
    ["mcp         the agents that read MCP_SERVERS use the dev MCP server devtools", "I used the MCP tools", "devtools__count_words"],
    { extra: ["--tenant", MCP_TENANT] },
  );

  const peers = Object.entries(own.peerDependencies).map(([name, range]) => `${name}@${range}`);
  await step("the peers at their highest", "npm", ["install", "--no-audit", "--no-fund", ...peers], { cwd: starter });
  const versions = Object.keys(own.peerDependencies).map(
    (name) => `${name}@${JSON.parse(readFileSync(join(starter, "node_modules", name, "package.json"), "utf8")).version}`,
  );
  process.stdout.write(`   ${versions.join(", ")}\n`);
  await step("npm run check (highest peers)", "npm", ["run", "check"], { cwd: starter });
  await step("npm test (highest peers)", "npm", ["test"], { cwd: starter });

  // --legacy-peer-deps: the command needs none of the peers, and on Node 20 npm cannot place ai 7 (engines: Node 22+).
  const { tarball } = packed;
  await step(
    "npx --legacy-peer-deps dynamicagents new (the published route's command, from the tarball)",
    "npx",
    ["--yes", "--legacy-peer-deps", `--package=${tarball}`, "--", "dynamicagents", "new", join(work, "published"), "--core", `file:${tarball}`],
    { cwd: work },
  );
  if (!existsSync(join(work, "published", "src/tenants/assistant/agent.ts"))) throw new Error("the published route's `new` wrote no starter");
}

/** npx installs the tarball in a folder of its own under npm's cache, new for every tarball path: leave none behind. */
function removeNpxInstall(tarball) {
  const npx = join(execFileSync("npm", ["config", "get", "cache"], { env: outside, encoding: "utf8" }).trim(), "_npx");
  if (!existsSync(npx)) return;
  for (const dir of readdirSync(npx)) {
    const manifest = join(npx, dir, "package.json");
    if (existsSync(manifest) && readFileSync(manifest, "utf8").includes(tarball)) rmSync(join(npx, dir), { recursive: true, force: true });
  }
}

const work = mkdtempSync(join(tmpdir(), "starter-"));
const started = performance.now();
let failure;
try {
  await main(work);
} catch (error) {
  failure = error;
} finally {
  if (keep) process.stdout.write(`kept ${work}${packed.tarball ? ` and ${packed.tarball}` : ""}\n`);
  else {
    if (packed.tarball) removeNpxInstall(packed.tarball);
    rmSync(work, { recursive: true, force: true });
    if (packed.created && packed.tarball) rmSync(packed.tarball, { force: true });
  }
}
process.stdout.write("\n── check:starter summary\n");
for (const [label, seconds] of timings) process.stdout.write(`  ${seconds.toFixed(1).padStart(6)} s  ${label}\n`);
process.stdout.write(`  ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  in all\n`);
if (failure) {
  process.stderr.write(`check:starter failed: ${failure.message}\n`);
  process.exitCode = 1;
} else process.stdout.write("check:starter: the packed package makes, tests and builds a repository of agents outside this one\n");
