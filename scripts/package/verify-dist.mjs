// The built package, as `npm pack` ships it (verify:exports runs this after
// its checks of the sources): dist/ is built afresh; every export's `types`
// and `default` exist and are shipped by `files`; each entry's JavaScript
// bundles from dist/ alone, and no runtime entry reaches dist/testing/; the
// Node realm's entry loads in plain Node; `npm pack` drops the `development`
// condition (prepack) and puts it back (postpack); each peer's lowest version
// is the exact version this repository develops against; the bin is shipped
// and has its shebang; the local stack `dynamicagents start` runs (scripts/dev)
// is shipped with everything it imports: each `../../src/….ts` it loads here
// has its dist/ twin (scripts/dev/from-dist.mjs sends it there in the
// package), each package it imports is a dependency or a peer.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

/** @param {string} root @param {any} pkg @param {string[]} testRealms @returns {Promise<string[]>} failures */
export async function verifyDist(root, pkg, testRealms) {
  const failures = [];
  const built = spawnSync(process.execPath, [resolve(root, "scripts/package/build.mjs")], { cwd: root, encoding: "utf8" });
  if (built.status !== 0) return [`build:package failed:\n${built.stdout}${built.stderr}`];

  // `files` entries as npm reads them here: a folder ships everything under it, `*` matches within one folder.
  const patterns = pkg.files.map((entry) => new RegExp(`^${entry.replaceAll(".", "\\.").replaceAll("*", "[^/]*")}(?:/|$)`));
  const shipped = (file) => patterns.some((pattern) => pattern.test(file.replace(/^\.\//, "")));
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target !== "object") continue;
    if ("development" in target && Object.keys(target)[0] !== "development") failures.push(`${subpath}: \`development\` must be its first condition`);
    for (const file of [target.types, target.default]) {
      if (!existsSync(resolve(root, file))) failures.push(`${subpath}: ${file} was not built`);
      if (!shipped(file)) failures.push(`${subpath}: ${file} is not in \`files\``);
    }
    const result = await build({
      entryPoints: [resolve(root, target.default)],
      bundle: true,
      write: false,
      metafile: true,
      format: "esm",
      platform: "neutral",
      logLevel: "silent",
      loader: { ".sql": "text" },
      packages: "external",
      external: ["cloudflare:*", "node:*"],
    }).catch((error) => ({ error }));
    if ("error" in result) {
      failures.push(`${subpath}: dist does not bundle: ${result.error.message.split("\n")[0]}`);
      continue;
    }
    const inputs = Object.keys(result.metafile.inputs).map((p) => relative(root, resolve(root, p)));
    const outside = inputs.find((p) => !p.startsWith("dist/") && !p.startsWith("migrations/"));
    if (outside) failures.push(`${subpath}: dist reaches ${outside}, which is neither dist/ nor migrations/`);
    const unshipped = inputs.find((p) => !shipped(p));
    if (unshipped) failures.push(`${subpath}: dist imports ${unshipped}, which \`files\` does not ship`);
    if (!testRealms.includes(subpath)) {
      const leak = inputs.find((p) => p.startsWith("dist/testing/"));
      if (leak) failures.push(`${subpath}: dist reaches the test harness (${leak})`);
    }
    console.log(`ok ${subpath.padEnd(14)} dist: ${inputs.length} modules`);
  }

  // The Node realm is loaded by an author's vitest config in plain Node: it must import there, unbundled.
  await import(pathToFileURL(resolve(root, pkg.exports["./testing/node"].default)).href).catch((error) =>
    failures.push(`./testing/node: dist does not load in Node: ${error.message}`),
  );

  for (const [peer, range] of Object.entries(pkg.peerDependencies ?? {})) {
    const lowest = /^\^(\d+\.\d+\.\d+)$/.exec(range)?.[1];
    if (!lowest) failures.push(`peer ${peer}: range ${range} is not ^x.y.z (the starter pins its lower bound)`);
    else if (pkg.devDependencies?.[peer] !== lowest)
      failures.push(`peer ${peer}: devDependencies pins ${pkg.devDependencies?.[peer]}, not the range's lowest ${lowest}`);
  }
  if (!/manifest\.mjs publish/.test(pkg.scripts.prepack ?? "") || !/manifest\.mjs source/.test(pkg.scripts.postpack ?? "")) {
    failures.push("scripts: prepack must run `scripts/package/manifest.mjs publish` and postpack `… source` (the published exports carry no `development`)");
  }
  for (const [name, file] of Object.entries(pkg.bin ?? {})) {
    if (!shipped(file)) failures.push(`bin ${name}: ${file} is not in \`files\``);
    else if (!readFileSync(resolve(root, file), "utf8").startsWith("#!/usr/bin/env node\n")) failures.push(`bin ${name}: ${file} has no node shebang`);
  }
  failures.push(...shippedStack(root, pkg, shipped));
  return failures;
}

/**
 * What scripts/dev imports, as the package ships it: its own files, dist/ for src/, and packages an author installs with it.
 * @param {string} root @param {any} pkg @param {(file: string) => boolean} shipped @returns {string[]} failures
 */
function shippedStack(root, pkg, shipped) {
  const failures = [];
  const installed = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
  const dir = resolve(root, "scripts/dev");
  for (const name of readdirSync(dir).filter((file) => file.endsWith(".mjs"))) {
    const file = `scripts/dev/${name}`;
    if (!shipped(file)) failures.push(`${file} is not in \`files\` (dynamicagents start runs it)`);
    const text = readFileSync(resolve(dir, name), "utf8");
    for (const [, specifier] of text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']/gms)) {
      if (specifier.startsWith("node:")) continue;
      if (!specifier.startsWith(".")) {
        const pkgName = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0];
        if (!installed.has(pkgName)) failures.push(`${file} imports ${pkgName}, which is neither a dependency nor a peer: an author's install lacks it`);
        continue;
      }
      const target = relative(root, resolve(dir, specifier));
      const twin = target.startsWith("src/") ? target.replace(/^src\//, "dist/").replace(/\.ts$/, ".js") : target;
      if (!existsSync(resolve(root, twin))) failures.push(`${file} imports ${specifier}: ${twin} does not exist${twin === target ? "" : " (its dist/ twin)"}`);
      else if (!shipped(twin)) failures.push(`${file} imports ${specifier}: ${twin} is not in \`files\``);
    }
  }
  return failures;
}
