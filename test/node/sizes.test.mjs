// `npm run check:sizes` (scripts/check/sizes.mjs) fails on a file of src/ over
// its lines, or src/host/ over its total, and passes the tree as it is. Nothing
// is planted in the real tree: the oversized files are written into a temporary one.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_FILE_LINES, MAX_FOLDER_LINES } from "../../scripts/check/sizes.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHECKER = join(ROOT, "scripts/check/sizes.mjs");
const temps = [];

afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

const lines = (n) => "export const x = 1;\n".repeat(n);

function check(files) {
  const root = mkdtempSync(join(tmpdir(), "sizes-"));
  temps.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const run = spawnSync(process.execPath, [CHECKER, "--root", root], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe("the size check", () => {
  it("passes the repository as it is", () => {
    const run = spawnSync(process.execPath, [CHECKER], { encoding: "utf8" });
    expect(run.stdout).toContain("sizes: OK");
    expect(run.status).toBe(0);
  });

  it("fails a file of src/ one line over the limit, naming it; passes it at the limit", () => {
    expect(check({ "src/round/loop.ts": lines(MAX_FILE_LINES) }).status).toBe(0);
    const over = check({ "src/round/loop.ts": lines(MAX_FILE_LINES + 1) });
    expect(over.status).toBe(1);
    expect(over.output).toContain(`src/round/loop.ts: ${MAX_FILE_LINES + 1} lines`);
  });

  it("fails src/host/ over its total, files under the limit each, subfolders counted", () => {
    const max = MAX_FOLDER_LINES["src/host/"];
    // `max` lines in files of 400 (and one of the rest), one in a subfolder.
    const files = Object.fromEntries(
      Array.from({ length: Math.ceil(max / 400) }, (_, i) => [i === 0 ? "src/host/parts/m0.ts" : `src/host/m${i}.ts`, lines(Math.min(400, max - i * 400))]),
    );
    expect(check(files).status).toBe(0);
    const over = check({ ...files, "src/host/c.ts": lines(1) });
    expect(over.status).toBe(1);
    expect(over.output).toContain(`src/host/: ${max + 1} lines in all`);
  });
});
