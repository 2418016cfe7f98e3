// The local stack's tenants come from the deployment's own tenant registry
// (scripts/dev/tenants.mjs): found beside wrangler's `main` or named in
// package.json, bundled with the deployment's wrangler's esbuild (its
// `cloudflare:*` imports stubbed) and run in a child Node process, each
// `enabled(env)` evaluated with wrangler.jsonc `vars` and the dev secrets.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { distTwin } from "../../scripts/dev/from-dist.mjs";
import { RegistryError, describeTenants, findRegistry, loadTenants, unknownTenant } from "../../scripts/dev/tenants.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const made = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A deployment of its own in a temporary folder, with this checkout's node_modules (its wrangler). */
function repository(files) {
  const dir = mkdtempSync(join(tmpdir(), "tenants-test-"));
  made.push(dir);
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  for (const [path, text] of Object.entries({ "package.json": '{ "name": "agents", "type": "module" }', ...files })) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const STARTER_LIKE = {
  "wrangler.jsonc": '{\n  // as the starter writes it\n  "main": "src/worker.ts",\n  "vars": { "WEATHER": "on" },\n}\n',
  "src/worker.ts": 'export { default } from "./tenants.js";\n',
  "src/agent.ts": 'import { DurableObject } from "cloudflare:workers";\nexport class WeatherAgent extends DurableObject {}\n',
  "src/tenants.ts": [
    'import type { WeatherAgent } from "./agent.js";',
    'export * from "./agent.js";',
    "const tenants: Record<string, { agent: (env: any) => WeatherAgent; enabled?: (env: Record<string, string>) => boolean }> = {",
    "  assistant: { agent: (env) => env.ASSISTANT },",
    '  weather: { agent: (env) => env.WEATHER_AGENT, enabled: (env) => env.WEATHER === "on" },',
    '  secret: { agent: (env) => env.SECRET, enabled: (env) => env.SECRET_TENANT === "1" },',
    "};",
    "export default tenants;",
  ].join("\n"),
};

describe("the tenant registry", () => {
  it("reads the reference's: every tenant, conformance served only with CONFORMANCE=1", async () => {
    const registry = await loadTenants({ root: ROOT });
    expect(registry.shown).toBe("reference/tenants.ts");
    expect(registry.source).toBe("beside wrangler.jsonc's main reference/worker.ts");
    expect(registry.tenants.map((t) => [t.name, t.enabled])).toEqual([
      ["assistant", true],
      ["researcher", true],
      ["conformance", false],
    ]);
    expect(registry.served).toEqual(["assistant", "researcher"]);
    expect((await loadTenants({ root: ROOT, vars: { CONFORMANCE: "1" } })).served).toEqual(["assistant", "researcher", "conformance"]);
    expect(unknownTenant(registry, "weather")).toBe(
      `unknown tenant "weather": the tenant registry reference/tenants.ts (beside wrangler.jsonc's main reference/worker.ts) lists assistant, researcher, conformance; choose assistant or researcher`,
    );
    expect(unknownTenant(registry, "conformance")).toContain("is in the tenant registry reference/tenants.ts");
  });

  it("reads an author's default export beside main, agent classes and cloudflare:workers included, enabled(env) from vars and the dev secrets", async () => {
    const root = repository({ ...STARTER_LIKE, ".dev.vars": "SECRET_TENANT=1\n" });
    const registry = await loadTenants({ root, devVarsFile: join(root, ".dev.vars") });
    expect(registry.tenants).toEqual([
      { name: "assistant", predicate: false, enabled: true },
      { name: "weather", predicate: true, enabled: true },
      { name: "secret", predicate: true, enabled: true },
    ]);
    expect(describeTenants(registry)).toBe("src/tenants.ts (beside wrangler.jsonc's main src/worker.ts) serves assistant, weather, secret");
    expect((await loadTenants({ root })).served).toEqual(["assistant", "weather"]);
  });

  it('takes package.json "dynamicagents": { "tenants" } over what is beside main', async () => {
    const root = repository({
      ...STARTER_LIKE,
      "package.json": '{ "name": "agents", "type": "module", "dynamicagents": { "tenants": "config/registry.mjs" } }',
      "config/registry.mjs": "export const tenants = { only: {} };\n",
    });
    const registry = await loadTenants({ root });
    expect(registry.served).toEqual(["only"]);
    expect(registry.source).toBe('named by package.json "dynamicagents.tenants"');
  });

  it("applies wrangler.jsonc's alias as wrangler does: a relative key replaces that exact specifier, and no other", async () => {
    const root = repository({
      "wrangler.jsonc": '{ "main": "src/worker.ts", "alias": { "../names.js": "./stubs/names.js" } }',
      "src/worker.ts": "export default {};\n",
      "src/names.js": 'export const names = ["real"];\n',
      "src/lib/pick.js": 'export { names } from "../names.js";\n',
      "stubs/names.js": 'export const names = ["stubbed"];\n',
      "src/tenants.ts": [
        'import { names as picked } from "./lib/pick.js";',
        'import { names as direct } from "./names.js";',
        "export default Object.fromEntries([...picked, ...direct].map((name) => [name, {}]));",
      ].join("\n"),
    });
    expect((await loadTenants({ root })).served).toEqual(["stubbed", "real"]);
  });

  it("says which paths it tried and how to name the registry, when there is none", () => {
    const root = repository({ "wrangler.jsonc": '{ "main": "worker/index.ts" }', "worker/index.ts": "export default {};\n" });
    expect(() => findRegistry(root)).toThrow(RegistryError);
    expect(() => findRegistry(root)).toThrow(
      `no tenant registry beside wrangler.jsonc's main worker/index.ts: tried worker/tenants.ts, worker/tenants.mts, worker/tenants.js, worker/tenants.mjs; write one there (a map of tenants, exported as \`tenants\` or as the default) or name it with package.json "dynamicagents": { "tenants": "<path>" }`,
    );
    const named = repository({ "package.json": '{ "dynamicagents": { "tenants": "nowhere.ts" } }' });
    expect(() => findRegistry(named)).toThrow(/the tenant registry nowhere\.ts named by package\.json "dynamicagents\.tenants" does not exist/);
    expect(() => findRegistry(repository({}))).toThrow(/no wrangler\.jsonc or wrangler\.json in .*name it with package\.json "dynamicagents"/);
  });

  it("names the registry when it does not bundle or throws while loading", async () => {
    const broken = repository({ ...STARTER_LIKE, "src/tenants.ts": 'import { nothing } from "./missing.js";\nexport default { a: nothing };\n' });
    await expect(loadTenants({ root: broken })).rejects.toThrow(/could not bundle the tenant registry src\/tenants\.ts:\n.*missing\.js/);
    const throwing = repository({ ...STARTER_LIKE, "src/tenants.ts": 'throw new Error("no tenants today");\n' });
    await expect(loadTenants({ root: throwing })).rejects.toThrow(
      "the tenant registry src/tenants.ts could not be read: loading it exited 1: Error: no tenants today",
    );
    const empty = repository({ ...STARTER_LIKE, "src/tenants.ts": "export default {};\n" });
    await expect(loadTenants({ root: empty })).rejects.toThrow(/lists no tenant: `npx dynamicagents add-tenant NAME` adds one/);
  });
});

describe("the stack as the package ships it (from-dist.mjs)", () => {
  it("sends an import of a src/ module that is not there to its dist/ twin, and leaves the rest alone", () => {
    const parent = new URL("../../scripts/dev/start.mjs", import.meta.url).href;
    // Here src/ exists: nothing changes.
    expect(distTwin("../../src/a2a/wire.ts", parent)).toBeUndefined();
    expect(distTwin("../../src/a2a/gone.ts", parent)).toBe(new URL("../../dist/a2a/gone.js", import.meta.url).href);
    expect(distTwin("./stack.mjs", parent)).toBeUndefined();
    expect(distTwin("jose", parent)).toBeUndefined();
    expect(distTwin("../../src/a2a/gone.ts", "file:///elsewhere/scripts/dev/x.mjs")).toBeUndefined();
  });
});
