// `npm run check:boundaries` (scripts/check/boundaries.mjs) and `npm run check:cycles`
// (Biome's noImportCycles, as biome.jsonc configures it) fail on what they forbid.
// Nothing is planted in the real tree: a file is either checked through stdin
// (--stdin-file-path, against the real src/) or written into a temporary copy.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHECKER = join(ROOT, "scripts/check/boundaries.mjs");
const BIOME = join(ROOT, "node_modules/.bin/biome");
const temps = [];

afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function tree(files) {
  const dir = mkdtempSync(join(tmpdir(), "boundaries-"));
  temps.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** The checker on one file whose text comes through stdin, as if it stood at `path` under `root`. */
function checkText(path, text, root = ROOT) {
  const run = spawnSync(process.execPath, [CHECKER, "--root", root, "--stdin-file-path", path, "--json"], { input: text, encoding: "utf8" });
  return { status: run.status, stderr: run.stderr, violations: run.status === 2 ? [] : JSON.parse(run.stdout).violations };
}

function checkTree(root) {
  const run = spawnSync(process.execPath, [CHECKER, "--root", root], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe("the boundary check", () => {
  it("fails on src/db importing ../a2a/errors.js, naming the file, the line and the rule", () => {
    const result = checkText("src/db/planted.ts", 'export const x = 1;\nimport { RpcError } from "../a2a/errors.js";\n');
    expect(result.status).toBe(1);
    expect(result.violations).toEqual([
      expect.objectContaining({ file: "src/db/planted.ts", line: 2, rule: "db-knows-no-protocol", target: "src/a2a/errors.ts" }),
    ]);
  });

  it("passes src/db importing src/errors and its own folder", () => {
    const result = checkText("src/db/planted.ts", 'import { ConfigError } from "../errors/index.js";\nimport { AgentDb } from "./index.js";\n');
    expect(result).toEqual({ status: 0, stderr: "", violations: [] });
  });

  it.each([
    ["import type", 'import type { RpcError } from "../a2a/index.js";'],
    ["export … from", 'export { RpcError } from "../a2a/index.js";'],
    ["export type … from", 'export type { ErrorInfo } from "../a2a/index.js";'],
    ["export * from", 'export * from "../a2a/index.js";'],
    ["a dynamic import()", 'export const load = () => import("../a2a/index.js");'],
    ['a type-level import("…")', 'export type E = import("../a2a/index.js").RpcError;'],
    ["the package's own public subpath", 'import { RpcError } from "@dynamicagents/core/a2a";'],
    ["a roundabout relative path", 'import { RpcError } from "./../../src/db/../a2a/index.js";'],
    ["the protocol package", 'import { Task } from "@a2a-js/sdk";'],
    ["a subpath of the protocol package", 'import { A2A_ERROR_CODE } from "@a2a-js/sdk/errors";'],
  ])("sees %s", (_, line) => {
    const result = checkText("src/db/planted.ts", `${line}\n`);
    expect(result.status).toBe(1);
    expect(result.violations.map((v) => v.rule)).toEqual(["db-knows-no-protocol"]);
  });

  it.each([
    ["src/a2a/planted.ts", 'import { x } from "../db/index.js";', "a2a-is-a-leaf"],
    ["src/a2a/planted.ts", 'import { x } from "../worker/index.js";', "a2a-is-a-leaf"],
    ["src/errors/planted.ts", 'import { x } from "../a2a/errors.js";', "errors-is-a-leaf"],
    ["src/turn/planted.ts", 'import type { X } from "../host/index.js";', ["turn-knows-no-agent-class", "turn-speaks-the-boundary"]],
    ["src/turn/planted.ts", 'import type { X } from "../db/index.js";', "turn-speaks-the-boundary"],
    ["src/host/planted.ts", 'import { X } from "../worker/index.js";', "data-flows-one-way"],
    ["src/round/planted.ts", 'import type { X } from "../turn/index.js";', "data-flows-one-way"],
    ["src/round/planted.ts", 'import { X } from "../worker/index.js";', "data-flows-one-way"],
    ["src/round/planted.ts", 'import type { TaskAgent } from "../host/task-agent.js";', "loop-sits-below-the-object"],
    ["src/round/planted.ts", 'import { DynamicAgent } from "@dynamicagents/core/host";', "loop-sits-below-the-object"],
    ["src/host/planted.ts", 'import { TurnWorkflowBase } from "../turn/index.js";', "data-flows-one-way"],
    ["src/db/planted.ts", 'import type { LoopDeps } from "../round/deps.js";', "storage-knows-no-loop"],
    ["src/agent/planted.ts", 'import { runTurn } from "../round/index.js";', "models-and-plugins-know-no-agent"],
    ["src/plugin/planted.ts", 'import type { DynamicAgent } from "../host/index.js";', "models-and-plugins-know-no-agent"],
    ["src/worker/planted.ts", 'import type { X } from "../db/index.js";', "edge-stays-at-the-edge"],
    ["src/worker/planted.ts", 'import { X } from "../turn/index.js";', "edge-stays-at-the-edge"],
    ["src/host/planted.ts", 'import { X } from "../testing/index.js";', "no-test-harness-at-runtime"],
    ["src/host/planted.ts", 'import { it } from "vitest";', "test-libraries-only-in-tests"],
    ["src/agent/planted.ts", 'import { MockLanguageModelV4 } from "ai/test";', "test-libraries-only-in-tests"],
    ["reference/planted.ts", 'import { env } from "cloudflare:test";', "test-libraries-only-in-tests"],
    ["reference/planted.ts", 'import { x } from "../src/worker/index.js";', "reference-uses-public-subpaths"],
  ])("fails %s with %s", (path, line, rule) => {
    const result = checkText(path, `${line}\n`);
    expect(result.status).toBe(1);
    expect(result.violations.map((v) => v.rule)).toEqual([rule].flat());
  });

  it.each([
    ["src/a2a/planted.ts", 'import { ConfigError } from "../errors/index.js";\nimport { x } from "./index.js";\nimport { Task } from "@a2a-js/sdk";'],
    ["src/worker/planted.ts", 'import { x } from "../a2a/index.js";\nimport { y } from "../errors/index.js";'],
    ["src/testing/planted.ts", 'import { it } from "vitest";\nimport { x } from "../host/index.js";'],
    [
      "src/round/planted.ts",
      'import { x } from "../agent/index.js";\nimport { y } from "../plugin/index.js";\nimport { z } from "../subtasks/index.js";\nimport type { Q } from "../db/index.js";',
    ],
    ["src/host/planted.ts", 'import { runTurn } from "../round/index.js";\nimport { AgentDB } from "../db/index.js";'],
    ["reference/planted.ts", 'import { createA2AWorker } from "@dynamicagents/core/worker";\nimport worker from "./worker.js";'],
  ])("passes what %s may import", (path, text) => {
    expect(checkText(path, `${text}\n`)).toEqual({ status: 0, stderr: "", violations: [] });
  });

  it("fails on an import it cannot resolve, since it cannot tell where that lands", () => {
    const result = checkText("src/db/planted.ts", 'import { x } from "../a2a/no-such-file.js";\n');
    expect(result.status).toBe(1);
    expect(result.violations.map((v) => v.rule)).toEqual(["resolvable"]);
  });

  it("scans a whole tree: fails with the forbidden import planted, passes without it", () => {
    const files = {
      "package.json": JSON.stringify({ name: "@dynamicagents/core", type: "module", exports: { "./a2a": "./src/a2a/index.ts" } }),
      "src/errors/index.ts": "export class ConfigError extends Error {}\n",
      "src/a2a/errors.ts": 'import { ConfigError } from "../errors/index.js";\nexport class RpcError extends ConfigError {}\n',
      "src/a2a/index.ts": 'export * from "./errors.js";\n',
      "src/db/store.ts": 'import { ConfigError } from "../errors/index.js";\nexport const store = ConfigError;\n',
    };
    const clean = tree(files);
    expect(checkTree(clean)).toMatchObject({ status: 0, output: expect.stringContaining("boundaries: OK") });

    const planted = tree({ ...files, "src/db/store.ts": 'import type { RpcError } from "../a2a/errors.js";\nexport type Store = RpcError;\n' });
    const result = checkTree(planted);
    expect(result.status).toBe(1);
    expect(result.output).toContain("src/db/store.ts:1:31  db-knows-no-protocol");
  });
});

describe("the circle check (Biome's noImportCycles with biome.jsonc)", () => {
  function lintCycles(files) {
    const dir = tree(files);
    copyFileSync(join(ROOT, "biome.jsonc"), join(dir, "biome.jsonc"));
    // The temporary copy is no git checkout: the same configuration, VCS off.
    const run = spawnSync(BIOME, ["lint", "--vcs-enabled=false", "--colors=off", "--only=suspicious/noImportCycles", "."], { cwd: dir, encoding: "utf8" });
    return { status: run.status, output: run.stdout + run.stderr };
  }

  it("fails on a planted two-file circle of `.js` specifiers, one side type-only", () => {
    const result = lintCycles({
      "src/db/task-shape.ts": 'import type { TaskJson } from "./task-store.js";\nexport const shape = (t: TaskJson) => t;\n',
      "src/db/task-store.ts":
        'import { shape } from "./task-shape.js";\nexport interface TaskJson { id: string }\nexport const get = (t: TaskJson) => shape(t);\n',
    });
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("noImportCycles");
    expect(result.output).toContain("src/db/task-shape.ts");
    expect(result.output).toContain("src/db/task-store.ts");
  });

  it("fails on a circle through a barrel (export * from an index that imports back)", () => {
    const result = lintCycles({
      "src/a/index.ts": 'export * from "./x.js";\n',
      "src/a/x.ts": 'import type { Y } from "./index.js";\nexport type X = { y?: Y };\nexport type Y = 1;\n',
    });
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("noImportCycles");
  });

  it("passes the same files once the circle is cut", () => {
    const result = lintCycles({
      "src/db/task-json.ts": "export interface TaskJson { id: string }\n",
      "src/db/task-shape.ts": 'import type { TaskJson } from "./task-json.js";\nexport const shape = (t: TaskJson) => t;\n',
      "src/db/task-store.ts":
        'import type { TaskJson } from "./task-json.js";\nimport { shape } from "./task-shape.js";\nexport const get = (t: TaskJson) => shape(t);\n',
    });
    expect(result).toMatchObject({ status: 0 });
  });
});
