#!/usr/bin/env node
// The publish gate for the package's subpaths. The sources (each export's
// `development` target): every entry resolves and bundles, every relative
// import is a full ESM specifier (with its `.js`, or `.ts` where Node tooling
// loads the module as it is: the wire constants, the token minter, the
// JSON-RPC client), and no runtime subpath's import graph reaches the test
// harness. Then the built package the same way, and its manifest
// (scripts/package/verify-dist.mjs).
import { readFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { verifyDist } from "./package/verify-dist.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(await readFile(resolve(root, "package.json"), "utf8"));
const TEST_REALMS = ["./testing", "./testing/node"];
const failures = [];

for (const [subpath, target] of Object.entries(pkg.exports)) {
  if (subpath === "./package.json") continue;
  const entry = typeof target === "string" ? target : target.development;
  const result = await build({
    entryPoints: [resolve(root, entry)],
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "neutral",
    logLevel: "silent",
    // Only our own graph matters here; packages and the runtime stay outside.
    // .sql migrations load as text, as wrangler loads them by default.
    loader: { ".sql": "text" },
    packages: "external",
    external: ["cloudflare:*", "node:*"],
  }).catch((error) => ({ error }));
  if ("error" in result) {
    failures.push(`${subpath}: does not build: ${result.error.message.split("\n")[0]}`);
    continue;
  }
  const inputs = Object.keys(result.metafile.inputs).map((p) => relative(root, resolve(root, p)));
  for (const input of inputs) {
    const source = await readFile(resolve(root, input), "utf8");
    for (const match of source.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      if (!/\.(js|mjs|ts|json|sql)$/.test(match[1])) failures.push(`${input}: relative import ${match[1]} has no .js extension (not a valid ESM specifier)`);
    }
  }
  if (!TEST_REALMS.includes(subpath)) {
    const leak = inputs.find((p) => p.startsWith("src/testing/"));
    if (leak) failures.push(`${subpath}: its import graph reaches the test harness (${leak})`);
  }
  console.log(`ok ${subpath.padEnd(14)} src: ${inputs.length} modules`);
}
failures.push(...(await verifyDist(root, pkg, TEST_REALMS)));

if (failures.length) {
  console.error(`\nverify:exports failed:\n${[...new Set(failures)].map((f) => `  - ${f}`).join("\n")}`);
  process.exit(1);
}
console.log("verify:exports: every subpath resolves, uses ESM specifiers and keeps out of the test realm, from src/ and from the built dist/");
