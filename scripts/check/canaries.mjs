#!/usr/bin/env node
// The canary check over a test run's output (CI: .ci/run tees `npm test` into a
// file and runs this on it). The specs plant canaries: secret values in the test
// env (vitest.config.ts: `canary-secret-…`, the MCP fixture's bearer token among
// them), a secret an MCP tool returns (test/support/mcp-fixture.mjs: `leak`), and
// message text sent through full turns (`canary-text-…`, test/rate-limit.spec.ts). No line of output, whoever
// wrote it, may hold one, nor any JWT (a token logged is a credential leaked).
// Nothing is skipped: a line that legitimately prints a canary is a source to fix.
//
//   node scripts/check/canaries.mjs FILE…
//
// Exit 0: no canary; 1: a canary in some line (each such line is printed, the
// canary masked); 2: usage (no file, or one that cannot be read).
import { readFileSync } from "node:fs";

/** What is looked for, in this order; a match is printed as `[what]`. */
const CANARIES = [
  // The MCP fixture's two, by name: they hold dashes, which the pattern after them stops at, so
  // masking them whole takes their own. Built from parts, so that this line is no canary itself.
  { what: "canary secret", pattern: new RegExp(["canary", "secret", "mcp", "(?:token-4b8e|leak-9c2f)"].join("-"), "g") },
  { what: "canary secret", pattern: /canary-secret-[A-Za-z0-9]+/g },
  { what: "canary text", pattern: /canary-text-[A-Za-z0-9]+/g },
  // A JWT starts with `eyJ` (`{"`) twice: header and payload. The whole token is masked.
  { what: "JWT", pattern: /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*)?/g },
];

// Colours and cursor moves: a canary split by one is still a canary.
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
const SHOWN = 240;

/** Each offending line of `text`: its number (1-based), what it holds, and the line masked. */
function findCanaries(text) {
  const found = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.replace(ANSI, "");
    const hits = [...new Set(CANARIES.filter(({ pattern }) => line.match(pattern) !== null).map((c) => c.what))];
    if (hits.length === 0) return;
    let masked = line;
    for (const { what, pattern } of CANARIES) masked = masked.replace(pattern, `[${what}]`);
    found.push({ line: index + 1, what: hits, masked: masked.length > SHOWN ? `${masked.slice(0, SHOWN)}…` : masked });
  });
  return found;
}

function main(files) {
  if (files.length === 0) {
    process.stderr.write("usage: node scripts/check/canaries.mjs FILE…\n");
    return 2;
  }
  let failed = false;
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      process.stderr.write(`canaries: cannot read ${file}: ${error.code ?? error.message}\n`);
      return 2;
    }
    const found = findCanaries(text);
    for (const hit of found) process.stdout.write(`${file}:${hit.line}: ${hit.what.join(", ")}: ${hit.masked}\n`);
    if (found.length > 0) {
      failed = true;
      process.stdout.write(`canaries: ${found.length} line(s) of ${file} hold a canary or a token\n`);
    } else {
      process.stdout.write(`canaries: no canary or token in ${file}\n`);
    }
  }
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
