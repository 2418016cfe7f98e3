#!/usr/bin/env node
// The reference bundle (wrangler.jsonc's main, reference/worker.ts) must stay
// under 700 KiB gzipped. Builds with `wrangler deploy --dry-run --outdir` into
// a temporary folder, gzips every module it wrote (source maps and the README
// left out) with node:zlib at its default level, and prints the figure.
//
//   node scripts/check/bundle-size.mjs [--limit BYTES] [--top N] [--why PATH]
//
// What takes the room: `--top N` lists the N largest packages and modules,
// `--why PATH` what imports each module whose path contains PATH (through
// npm: `npm run check:bundle -- --top 20`). Both read esbuild's metafile
// (scripts/check/bundle-inputs.mjs).
//
// Exit 0 under the limit; 1 over it, or if a relative `alias` key of
// wrangler.jsonc reaches a second package; 2 if the build failed.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { WRANGLER_OFFLINE_ENV } from "../dev/wrangler.mjs";
import { aliasesReachingOtherPackages, importersOf, topInputs } from "./bundle-inputs.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const DEFAULT_LIMIT = 700 * 1024; // 716,800 bytes

const STUBS = "reference/bundle-stubs/";
const METAFILE = "bundle-meta.json";

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const limit = Number(option("--limit") ?? DEFAULT_LIMIT);
const top = option("--top") === undefined ? undefined : Number(option("--top"));
const why = option("--why");
if (!Number.isSafeInteger(limit) || limit <= 0 || (top !== undefined && !(Number.isSafeInteger(top) && top > 0)) || (args.includes("--why") && !why)) {
  process.stderr.write("usage: node scripts/check/bundle-size.mjs [--limit BYTES] [--top N] [--why PATH]\n");
  process.exit(2);
}

const fmt = (bytes) => `${bytes.toLocaleString("en-US")} bytes (${(bytes / 1024).toFixed(1)} KiB)`;

function main() {
  const outdir = mkdtempSync(join(tmpdir(), "bundle-size-"));
  try {
    return measure(outdir);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function measure(outdir) {
  const started = performance.now();
  // node_modules/.bin first, as npm scripts have it: wrangler needs the Node 24 devDependency.
  const bin = join(ROOT, "node_modules/.bin");
  const build = spawnSync(join(bin, "wrangler"), ["deploy", "--dry-run", "--outdir", outdir, "--metafile", join(outdir, METAFILE)], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`, ...WRANGLER_OFFLINE_ENV, FORCE_COLOR: "0", NO_COLOR: "1" },
  });
  if (build.status !== 0) {
    process.stderr.write(`${build.stdout}${build.stderr}\nbundle: wrangler deploy --dry-run failed (exit ${build.status ?? build.signal})\n`);
    return 2;
  }
  const meta = JSON.parse(readFileSync(join(outdir, METAFILE), "utf8"));
  const modules = readdirSync(outdir).filter((name) => !name.endsWith(".map") && name !== "README.md" && name !== METAFILE);
  let raw = 0;
  let gzipped = 0;
  for (const name of modules) {
    const bytes = readFileSync(join(outdir, name));
    raw += bytes.byteLength;
    gzipped += gzipSync(bytes).byteLength;
  }
  const ms = Math.round(performance.now() - started);
  const margin = Math.abs(limit - gzipped).toLocaleString("en-US");
  const verdict = gzipped <= limit ? `OK, ${margin} bytes to spare` : `OVER by ${margin} bytes`;
  process.stdout.write(
    `bundle: reference/worker.ts is ${fmt(gzipped)} gzipped, ${fmt(raw)} raw, in ${modules.length} module(s); limit ${fmt(limit)}: ${verdict} (${ms} ms)\n`,
  );
  const report = [];
  if (top !== undefined) report.push(...topInputs(meta, "worker.js", readFileSync(join(outdir, "worker.js"), "utf8"), top));
  if (why !== undefined) report.push(...importersOf(meta, "worker.js", why));
  if (top === undefined && why === undefined)
    report.push("bundle: what takes the room: npm run check:bundle -- --top 20 (and --why PATH: what imports a module)");
  const leaks = aliasesReachingOtherPackages(meta, STUBS);
  for (const leak of leaks) report.push(`bundle: the alias ${leak}: a relative alias key must serve one package (wrangler.jsonc)`);
  process.stdout.write(`${report.join("\n")}\n`);
  return gzipped <= limit && leaks.length === 0 ? 0 : 1;
}

process.exitCode = main();
