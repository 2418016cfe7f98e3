#!/usr/bin/env node
// Sizes that keep the rooms small (README "Layout"): no file in src/ over 500
// lines (one concern each: a longer one is split), and the caller's object,
// src/host/, a thin shell over its modules, at most 2,600 lines in all.
//
//   node scripts/check/sizes.mjs                 the repository
//   node scripts/check/sizes.mjs --root DIR      another tree (tests)
//
// Exit 0: within every limit; 1: over one; 2: usage.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Lines any one file of src/ may have. */
export const MAX_FILE_LINES = 500;
/** Lines a folder of src/ may have in all, its subfolders included. */
export const MAX_FOLDER_LINES = { "src/host/": 2600 };

/** Lines as `wc -l` counts them: newline characters. */
const linesOf = (text) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

function filesUnder(root, dir) {
  const out = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(root, path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Every file of `root`'s src/ with its lines, and what is over a limit. */
export function checkSizes(root) {
  const files = filesUnder(root, "src").map((path) => ({ path, lines: linesOf(readFileSync(join(root, path), "utf8")) }));
  const over = [];
  for (const { path, lines } of files) {
    if (lines > MAX_FILE_LINES) over.push(`${path}: ${lines} lines, over the ${MAX_FILE_LINES} any one file of src/ may have: split it by concern`);
  }
  const folders = Object.entries(MAX_FOLDER_LINES).map(([folder, max]) => {
    const lines = files.filter((f) => f.path.startsWith(folder)).reduce((sum, f) => sum + f.lines, 0);
    if (lines > max) over.push(`${folder}: ${lines} lines in all, over its ${max}: move what is not its concern to the room it belongs to`);
    return { folder, lines, max };
  });
  return { files, folders, over };
}

function main(argv) {
  let root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--root") root = resolve(argv[++i] ?? "");
    else {
      process.stderr.write(`sizes: unknown argument ${argv[i]}\nusage: node scripts/check/sizes.mjs [--root DIR]\n`);
      return 2;
    }
  }
  const { files, folders, over } = checkSizes(root);
  for (const line of over) process.stdout.write(`${line}\n`);
  const largest = files.reduce((a, b) => (b.lines > a.lines ? b : a), { path: "(none)", lines: 0 });
  const summary = [`${files.length} files, largest ${largest.path} (${largest.lines})`, ...folders.map((f) => `${f.folder} ${f.lines} of ${f.max}`)].join("; ");
  process.stdout.write(over.length === 0 ? `sizes: OK (${summary})\n` : `sizes: ${over.length} over a limit (${summary})\n`);
  return over.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
