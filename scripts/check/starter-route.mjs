// The clone route of README.md "Your first agent", as check:starter runs it:
// the fenced block after the marker line, one command per line (`a && b`
// runs `a` then `b`; a `cd` moves where the next ones run), `# …` comments
// dropped. The block is the README's own text: change one and the check runs
// the other.
import { readFileSync } from "node:fs";

export const MARKER = "<!-- check:starter runs this block as written -->";

/**
 * The commands of the block after the marker, in order, each a shell command or `{ cd }`.
 * @param {string} readme
 * @returns {Array<{ cd: string } | { run: string }>}
 */
export function cloneRoute(readme) {
  const lines = readme.split("\n");
  const at = lines.findIndex((line) => line.trim() === MARKER);
  if (at === -1) throw new Error(`README.md has no line ${MARKER} before the clone route of "Your first agent"`);
  const open = lines.findIndex((line, i) => i > at && /^\s*```/.test(line));
  const close = lines.findIndex((line, i) => i > open && /^\s*```\s*$/.test(line));
  if (open === -1 || close === -1) throw new Error(`README.md: no fenced block after ${MARKER}`);
  return lines
    .slice(open + 1, close)
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line && !line.startsWith("#"))
    .flatMap((line) => line.split(/\s+&&\s+/))
    .map((command) => (command.startsWith("cd ") ? { cd: command.slice(3).trim() } : { run: command }));
}

/** @param {string} path README.md */
export const readCloneRoute = (path) => cloneRoute(readFileSync(path, "utf8"));
