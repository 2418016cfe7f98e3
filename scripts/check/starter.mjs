#!/usr/bin/env node
// `npm run check:starter`: the proof that the package works outside this
// repository, as a newcomer meets it. In a temporary folder outside the
// checkout, with nothing of the checkout on PATH or in npm's environment:
//
//   1. `npm pack` (prepack builds dist/ and packs the published manifest)
//   2. `npx … dynamicagents new` from the tarball, depending on the tarball
//   3. its `npm install` (the npm cache first, the registry for the rest)
//   4. its `npm run check`, and our declarations checked strictly (skipLibCheck off)
//   5. its `npm test`, `npx wrangler deploy --dry-run`, and `npm start -- --once
//      "hello"` (the whole local stack, `dynamicagents start`, offline: the
//      stand-in model calls the starter's tool)
//   6. `npx dynamicagents add-tenant weather`, a custom tool of under forty
//      lines (starter-newcomer.mjs), then `npm run check` and `npm test` again,
//      and `npm start -- --once` at both tenants (the stand-in calls `forecast`)
//   7. the peers at the highest versions their ranges allow, then check and test
//
//   node scripts/check/starter.mjs [--keep]      --keep leaves the folder for a look
//
// Exit 0 when every step passed; otherwise 1, with the failed step's output.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../dev/http.mjs";
import { TENANT, writeNewcomerCode } from "./starter-newcomer.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const MAX_NEWCOMER_LINES = 40;
const keep = process.argv.includes("--keep");
const manifest = () => readFileSync(join(ROOT, "package.json"), "utf8");
const own = JSON.parse(manifest());

/** A shell as a newcomer has it: no npm_* settings of the `npm run` that started us, nothing of the checkout on PATH. */
const outside = Object.fromEntries(
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
);

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
 * `npm start -- --once TEXT` in the starter, on free ports, its state under `work`: exit 0 and the
 * stand-in's reply on stdout, holding each of `expected`.
 */
async function onceTurn(label, starter, work, text, expected, extra = []) {
  const ports = [await freePort(), await freePort(), await freePort(), await freePort()];
  const args = ["start", "--silent", "--", "--home", join(work, "stack"), "--port", String(ports[0]), "--gatekeeper-port", String(ports[1])];
  args.push("--model-port", String(ports[2]), "--mcp-port", String(ports[3]), "--once", text, ...extra);
  const run = await step(label, "npm", args, { cwd: starter });
  const missing = expected.filter((part) => !run.output.includes(part));
  if (missing.length) throw new Error(`${label}: the reply lacks ${missing.map((m) => JSON.stringify(m)).join(", ")}:\n${run.output}`);
}

async function main(work) {
  const starter = join(work, "agents");
  const before = manifest();
  const packed = await step("npm pack (builds dist/)", "npm", ["pack", "--pack-destination", work], { cwd: ROOT, env: process.env });
  if (manifest() !== before) throw new Error("package.json differs after npm pack: postpack did not restore it (node scripts/package/manifest.mjs source)");
  const tarball = join(work, packed.output.trim().split("\n").pop());

  // --legacy-peer-deps: the command needs none of the peers, and on Node 20 npm cannot place ai 7 (engines: Node 22+).
  await step(
    "npx dynamicagents new (from the tarball)",
    "npx",
    ["--yes", "--legacy-peer-deps", `--package=${tarball}`, "--", "dynamicagents", "new", starter, "--core", `file:${tarball}`],
    { cwd: work },
  );
  await step("npm install", "npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: starter });
  await step("npm run check", "npm", ["run", "check"], { cwd: starter });
  const strict = await step("our declarations, skipLibCheck off", "npx", ["tsc", "--noEmit", "--skipLibCheck", "false"], { cwd: starter, tolerate: true });
  const ours = strict.output.split("\n").filter((line) => line.includes(`node_modules/${own.name}/`));
  if (ours.length) throw new Error(`the package's declarations do not type-check in a consumer:\n${ours.join("\n")}`);
  await step("npm test", "npm", ["test"], { cwd: starter });
  await step("npx wrangler deploy --dry-run", "npx", ["wrangler", "deploy", "--dry-run", "--outdir", join(work, "dry-run")], { cwd: starter });
  await onceTurn('npm start -- --once "hello"', starter, work, "hello", [
    "[offline stand-in model]",
    "registry    src/tenants.ts (beside wrangler.jsonc's main src/worker.ts) serves assistant",
    "I called lookup, which returned",
  ]);

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
    ["--tenant", TENANT],
  );

  const peers = Object.entries(own.peerDependencies).map(([name, range]) => `${name}@${range}`);
  await step("the peers at their highest", "npm", ["install", "--no-audit", "--no-fund", ...peers], { cwd: starter });
  const versions = Object.keys(own.peerDependencies).map(
    (name) => `${name}@${JSON.parse(readFileSync(join(starter, "node_modules", name, "package.json"), "utf8")).version}`,
  );
  process.stdout.write(`   ${versions.join(", ")}\n`);
  await step("npm run check (highest peers)", "npm", ["run", "check"], { cwd: starter });
  await step("npm test (highest peers)", "npm", ["test"], { cwd: starter });
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
  if (keep) process.stdout.write(`kept ${work}\n`);
  else {
    removeNpxInstall(work);
    rmSync(work, { recursive: true, force: true });
  }
}
process.stdout.write("\n── check:starter summary\n");
for (const [label, seconds] of timings) process.stdout.write(`  ${seconds.toFixed(1).padStart(6)} s  ${label}\n`);
process.stdout.write(`  ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  in all\n`);
if (failure) {
  process.stderr.write(`check:starter failed: ${failure.message}\n`);
  process.exitCode = 1;
} else process.stdout.write("check:starter: the packed package makes, tests and builds a repository of agents outside this one\n");
