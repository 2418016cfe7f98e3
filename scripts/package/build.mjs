#!/usr/bin/env node
// `npm run build:package`: src/ to dist/, JavaScript and declarations, with
// the native TypeScript compiler (it has no programmatic API, so it runs as a
// command): the Workers realm (tsconfig.build.json), then the Node realm
// (tsconfig.build.node.json). dist/ is emptied first, so nothing a removed
// module left behind ships. Then every `exports` target must exist.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const tsc = resolve(root, "node_modules/.bin/tsc");

rmSync(resolve(root, "dist"), { recursive: true, force: true });
for (const project of ["tsconfig.build.json", "tsconfig.build.node.json"]) {
  const run = spawnSync(tsc, ["-p", project], { cwd: root, stdio: "inherit" });
  if (run.status !== 0) {
    process.stderr.write(`build:package: tsc -p ${project} failed\n`);
    process.exit(1);
  }
}

const { exports } = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8"));
const missing = Object.entries(exports)
  .filter(([, target]) => typeof target === "object")
  .flatMap(([subpath, target]) => [target.types, target.default].filter((file) => !existsSync(resolve(root, file))).map((file) => `${subpath}: ${file}`));
if (missing.length) {
  process.stderr.write(`build:package: exports name files the build did not write:\n${missing.map((m) => `  - ${m}`).join("\n")}\n`);
  process.exit(1);
}
process.stdout.write("build:package: dist/ written, every export target present\n");
