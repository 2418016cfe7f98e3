#!/usr/bin/env node
// The reference bundle (wrangler.jsonc's main, reference/worker.ts) must stay
// under 700 KiB gzipped. Builds with `wrangler deploy --dry-run --outdir` into
// a temporary folder, gzips every module it wrote (source maps and the README
// left out) with node:zlib at its default level, and prints the figure.
//
//   node scripts/check/bundle-size.mjs [--limit BYTES]
//
// Exit 0 under the limit; 1 over it; 2 if the build failed.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const DEFAULT_LIMIT = 700 * 1024; // 716,800 bytes

const args = process.argv.slice(2);
const limitAt = args.indexOf("--limit");
const limit = limitAt === -1 ? DEFAULT_LIMIT : Number(args[limitAt + 1]);
if (!Number.isSafeInteger(limit) || limit <= 0) {
  process.stderr.write("usage: node scripts/check/bundle-size.mjs [--limit BYTES]\n");
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
  const build = spawnSync(join(bin, "wrangler"), ["deploy", "--dry-run", "--outdir", outdir], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`, WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" },
  });
  if (build.status !== 0) {
    process.stderr.write(`${build.stdout}${build.stderr}\nbundle: wrangler deploy --dry-run failed (exit ${build.status ?? build.signal})\n`);
    return 2;
  }
  const modules = readdirSync(outdir).filter((name) => !name.endsWith(".map") && name !== "README.md");
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
  return gzipped <= limit ? 0 : 1;
}

process.exitCode = main();
