// scripts/check/canaries.mjs, which CI runs over the whole `npm test` output:
// it fails on a line holding a planted canary or a JWT, says which lines
// without repeating the canary, and passes a clean file.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const CHECKER = fileURLToPath(new URL("../../scripts/check/canaries.mjs", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "canaries-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Built from parts, so that no line of this file is itself a canary.
const SECRET = ["canary", "secret", "0a1b2c"].join("-");
const TEXT = ["canary", "text", "3d4e5f"].join("-");
const b64url = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
const JWT = `${b64url({ alg: "EdDSA", kid: "k1" })}.${b64url({ iss: "https://gatekeeper.test", sub: "u" })}.c2lnbmF0dXJl`;

let n = 0;
function check(...texts) {
  const files = texts.map((text) => {
    const file = join(dir, `output-${++n}.log`);
    writeFileSync(file, text);
    return file;
  });
  const run = spawnSync(process.execPath, [CHECKER, ...files], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr, files };
}

describe("the canary check", () => {
  it("passes a clean output", () => {
    const clean = check(
      [
        " ✓ test/edge.spec.ts (12 tests) 340ms",
        '{"type":"dynamicagents.event","v":1,"event":"edge.refused","data":{"check":"token.bearer","status":401,"code":0}}',
        "a canary, a secret, a text, eyJ alone, eyJhbGciOiJFZERTQSJ9 with no payload",
        "",
      ].join("\n"),
    );
    expect(clean.status, clean.output).toBe(0);
    expect(clean.output).toContain("no canary or token");
  });

  it("fails on a planted secret, text or JWT, naming each line, and never prints the canary", () => {
    const planted = check(
      [
        "stdout | test/x.spec.ts > a test",
        `agent could not start: SPEC_BROKEN_SECRET ${SECRET} is not a key`,
        "nothing here",
        `{"type":"dynamicagents.event","data":{"text":"${TEXT}"}}`,
        `fetch failed with Authorization: Bearer ${JWT}`,
      ].join("\n"),
    );
    expect(planted.status).toBe(1);
    const [file] = planted.files;
    expect(planted.output).toContain(`${file}:2: canary secret: agent could not start: SPEC_BROKEN_SECRET [canary secret] is not a key`);
    expect(planted.output).toContain(`${file}:4: canary text:`);
    expect(planted.output).toContain(`${file}:5: JWT: fetch failed with Authorization: Bearer [JWT]`);
    expect(planted.output).not.toContain(`${file}:1:`);
    expect(planted.output).not.toContain(`${file}:3:`);
    for (const canary of [SECRET, TEXT, JWT, JWT.slice(0, 20)]) expect(planted.output).not.toContain(canary);
  });

  it("masks the MCP fixture's token and leaked secret whole, dashes and all", () => {
    const token = ["canary", "secret", "mcp", "token", "4b8e"].join("-");
    const leaked = ["canary", "secret", "mcp", "leak", "9c2f"].join("-");
    const run = check([`whoami sent Authorization: Bearer ${token}`, `{"tool":"mcp__leak","output":"the backend said: ${leaked}"}`].join("\n"));
    expect(run.status).toBe(1);
    const [file] = run.files;
    expect(run.output).toContain(`${file}:1: canary secret: whoami sent Authorization: Bearer [canary secret]\n`);
    expect(run.output).toContain(`${file}:2: canary secret: {"tool":"mcp__leak","output":"the backend said: [canary secret]"}`);
    for (const part of ["4b8e", "9c2f", "mcp-token", "mcp-leak"]) expect(run.output).not.toContain(part);
  });

  it("sees a canary through terminal colours, and in any of several files", () => {
    const coloured = `\u001b[31m${SECRET.slice(0, 10)}\u001b[39m${SECRET.slice(10)}`;
    const run = check("clean\n", `line one\n${coloured}\n`);
    expect(run.status).toBe(1);
    expect(run.output).toContain(`${run.files[1]}:2: canary secret`);
    expect(run.output).toContain(`no canary or token in ${run.files[0]}`);
  });

  it("refuses to pass on nothing: no file, or one it cannot read, is a usage error", () => {
    expect(spawnSync(process.execPath, [CHECKER], { encoding: "utf8" }).status).toBe(2);
    expect(spawnSync(process.execPath, [CHECKER, join(dir, "missing.log")], { encoding: "utf8" }).status).toBe(2);
  });
});
