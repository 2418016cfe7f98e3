#!/usr/bin/env node
// package.json's `exports` name the built dist/ for `types` and `default`,
// and, first, the source under the `development` condition: Vite resolves
// that condition by default, so the specs (vitest) run this repository's
// sources with nothing built. The published package must not carry it: an
// author's vitest would resolve it too, to src/, which the package does not
// ship. So `npm pack` and `npm publish` pack the manifest without it:
//
//   node scripts/package/manifest.mjs publish   prepack: drop every `development` target
//   node scripts/package/manifest.mjs source    postpack: put them back (./dist/X.js → ./src/X.ts)
//
// Both are idempotent, so a pack that failed half-way is mended by running
// `source` again. Nothing else in the manifest changes.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const MANIFEST = resolve(dirname(fileURLToPath(import.meta.url)), "../../package.json");

/** The source a built entry comes from: `./dist/host/index.js` → `./src/host/index.ts`. */
const sourceOf = (built) => built.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts");

/** The manifest's `exports` as published: `types` and `default` only. */
function publishedExports(exports) {
  return Object.fromEntries(
    Object.entries(exports).map(([subpath, target]) => {
      if (typeof target === "string") return [subpath, target];
      const { development: _source, ...built } = target;
      return [subpath, built];
    }),
  );
}

/** The manifest's `exports` in this repository: `development` (the source) first, then the built files. */
function sourceExports(exports) {
  return Object.fromEntries(
    Object.entries(exports).map(([subpath, target]) => {
      if (typeof target === "string") return [subpath, target];
      const { development: _source, ...built } = target;
      return [subpath, { development: sourceOf(built.default), ...built }];
    }),
  );
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const mode = process.argv[2];
  const rewrite = { publish: publishedExports, source: sourceExports }[mode];
  if (!rewrite) {
    process.stderr.write("usage: node scripts/package/manifest.mjs publish|source\n");
    process.exit(2);
  }
  const manifest = JSON.parse(readFileSync(MANIFEST, "utf8"));
  manifest.exports = rewrite(manifest.exports);
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
}
