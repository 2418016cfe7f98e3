// Writes a tree of templates/ into a repository, its placeholders (in paths
// and contents) replaced. npm leaves `.gitignore` and `.npmrc` files out of a
// package, so templates hold `gitignore` and `npmrc` and the copy gets its dot back.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const TEMPLATES = fileURLToPath(new URL("../templates/", import.meta.url));

const RENAMED = new Map([
  ["gitignore", ".gitignore"],
  ["npmrc", ".npmrc"],
]);

/** @param {string} text @param {Record<string, string>} values */
const fill = (text, values) => Object.entries(values).reduce((out, [token, value]) => out.replaceAll(token, value), text);

/** Every file under `dir`, as paths relative to it (walked by hand: Node 20's early releases have no recursive readdir). */
function filesUnder(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path, base) : [relative(base, path)];
  });
}

/**
 * The files `templates/<tree>` becomes under `root`: `[path, text]` pairs,
 * nothing written yet. Refuses if any of them already exists.
 * @param {string} tree @param {string} root @param {Record<string, string>} values
 * @returns {Array<[string, string]>}
 */
export function renderTree(tree, root, values) {
  const source = join(TEMPLATES, tree);
  const files = filesUnder(source).map((file) => {
    const parts = file.split(/[\\/]/);
    const last = parts.pop();
    const target = join(root, ...parts.map((p) => fill(p, values)), RENAMED.get(last) ?? fill(last, values));
    return /** @type {[string, string]} */ ([target, fill(readFileSync(join(source, file), "utf8"), values)]);
  });
  const taken = files.filter(([target]) => existsSync(target)).map(([target]) => relative(root, target));
  if (taken.length) throw new Error(`these files exist already, and would be overwritten: ${taken.join(", ")}`);
  return files;
}

/** @param {Array<[string, string]>} files */
export function writeFiles(files) {
  for (const [path, text] of files) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
}
