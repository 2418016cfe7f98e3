// The package's command (cli/): `dynamicagents new` and `add-tenant` write
// and edit an author's repository exactly as documented, leave comments and
// layout alone, and refuse before writing anything. Installing and testing
// what they write is scripts/check/starter.mjs (CI).
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { addTenant } from "../../cli/add-tenant.mjs";
import { appendToArray, parseJsonc, plain } from "../../cli/jsonc.mjs";
import { tenantNames } from "../../cli/names.mjs";
import { coreDependency, createRepository } from "../../cli/new-repo.mjs";
import { registerTenant } from "../../cli/registry.mjs";
import { withMcpServer, withSubagentExport } from "../../cli/test-pool.mjs";
import { MARKER, cloneRoute, readCloneRoute } from "../../scripts/check/starter-route.mjs";

const MAIN = fileURLToPath(new URL("../../cli/main.mjs", import.meta.url));
const own = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
const made = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), "generator-"));
  made.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("tenant names", () => {
  it("derives the class, binding, identifiers and title from one name", () => {
    expect(tenantNames("trip-planner")).toEqual({
      tenant: "trip-planner",
      camel: "tripPlanner",
      pascal: "TripPlanner",
      binding: "TRIP_PLANNER_AGENT",
      title: "Trip Planner",
      words: "trip planner",
      agentClass: "TripPlannerAgent",
      subagentClass: "TripPlannerSubagent",
    });
    // Suffixed, so no tenant takes a binding the platform reads.
    expect(tenantNames("ai").binding).toBe("AI_AGENT");
  });

  it.each(["Weather", "9lives", "two--dashes", "trailing-", "under_score", ""])("refuses %j", (name) => {
    expect(() => tenantNames(name)).toThrow(/lower-case letters and digits/);
  });
});

describe("editing wrangler.jsonc", () => {
  const text = `{\n  // why\n  "durable_objects": {\n    "bindings": [] // none yet\n  },\n  "migrations": [{ "tag": "v1" }],\n}\n`;

  it("opens an empty array one element per line, and keeps every comment and trailing comma", () => {
    const once = appendToArray(text, ["durable_objects", "bindings"], '{ "name": "A" }');
    const twice = appendToArray(once, ["durable_objects", "bindings"], '{ "name": "B" }');
    expect(twice).toBe(
      `{\n  // why\n  "durable_objects": {\n    "bindings": [\n      { "name": "A" },\n      { "name": "B" }\n    ] // none yet\n  },\n  "migrations": [{ "tag": "v1" }],\n}\n`,
    );
  });

  it("adds to a one-line array on its line", () => {
    expect(plain(parseJsonc(appendToArray(text, ["migrations"], '{ "tag": "v2" }'))).migrations).toEqual([{ tag: "v1" }, { tag: "v2" }]);
    expect(appendToArray(text, ["migrations"], '{ "tag": "v2" }')).toContain('"migrations": [{ "tag": "v1" }, { "tag": "v2" }],');
  });

  it("reads comments, strings with escapes and slashes, and names the line of a mistake", () => {
    expect(plain(parseJsonc('/* a */ {"u": "http://x/*y*/\\"z", "n": [1, -2.5e3, true, null]} // b'))).toEqual({
      u: 'http://x/*y*/"z',
      n: [1, -2500, true, null],
    });
    expect(() => parseJsonc('{\n  "a": 1\n  "b": 2\n}')).toThrow(/line 3/);
  });
});

describe("registering a tenant in src/tenants.ts", () => {
  const registry =
    'import type { TenantConfig } from "@dynamicagents/core/worker";\n\nconst tenants: Record<string, TenantConfig> = {};\n\nexport default tenants;\n';

  it("adds the import, the class export and the entry, after those already there", () => {
    const one = registerTenant(registry, tenantNames("assistant"));
    const two = registerTenant(one, tenantNames("trip-planner"));
    expect(two).toBe(
      [
        'import type { TenantConfig } from "@dynamicagents/core/worker";',
        'import assistantTenant from "./tenants/assistant/index.js";',
        'import tripPlannerTenant from "./tenants/trip-planner/index.js";',
        'export * from "./tenants/assistant/index.js";',
        'export * from "./tenants/trip-planner/index.js";',
        "",
        "const tenants: Record<string, TenantConfig> = {",
        "  assistant: assistantTenant,",
        '  "trip-planner": tripPlannerTenant,',
        "};",
        "",
        "export default tenants;",
        "",
      ].join("\n"),
    );
    expect(() => registerTenant(two, tenantNames("assistant"))).toThrow(/already registers assistant/);
  });

  it("says what to add by hand when it cannot find the map", () => {
    expect(() => registerTenant('import x from "y";\nexport default {};\n', tenantNames("weather"))).toThrow(/import weatherTenant from/);
  });
});

describe("dynamicagents new, then add-tenant", () => {
  it("writes a repository with one tenant, pinned to this package's versions", async () => {
    const clone = scratch();
    writeFileSync(join(clone, "core.tgz"), "a tarball");
    const root = join(scratch(), "My Agents");
    await createRepository({ dir: root, core: "file:./core.tgz", cwd: clone });
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(pkg.name).toBe("my-agents");
    // The host SDKs are peers (never bundled twice): the new repository depends on each, at the exact version pinned here.
    const hostSdks = ["@a2a-js/sdk", "agents", "ai", "workers-ai-provider", "zod"].map((sdk) => [sdk, own.devDependencies[sdk]]);
    for (const [sdk, version] of hostSdks) expect(own.peerDependencies[sdk], sdk).toBe(`^${version}`);
    // A tarball named relative to where the command runs, written relative to the new repository, as npm reads `file:`.
    expect(pkg.dependencies).toEqual({ "@dynamicagents/core": `file:${relative(root, join(clone, "core.tgz"))}`, ...Object.fromEntries(hostSdks) });
    for (const tool of ["wrangler", "vitest", "vite", "typescript", "node", "@cloudflare/vitest-plugin", "@cloudflare/workers-types"]) {
      expect(pkg.devDependencies[tool]).toBe(own.devDependencies[tool]);
    }
    expect(Object.keys(pkg.scripts)).toEqual(expect.arrayContaining(["start", "check", "test"]));
    expect(existsSync(join(root, ".gitignore"))).toBe(true);
    // Offline: npm's own update check is off in the new repository too (README "Offline").
    expect(readFileSync(join(root, ".npmrc"), "utf8")).toMatch(/^update-notifier=false$/m);
    expect(statSync(join(root, ".dev.vars")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(root, ".dev.vars"), "utf8")).toMatch(/^A2A_SIGNING_KEY='\{"kty":"OKP".*"kid":"a2a-/);
    const wrangler = plain(parseJsonc(readFileSync(join(root, "wrangler.jsonc"), "utf8")));
    expect(wrangler.name).toBe("my-agents");
    expect(wrangler.durable_objects.bindings).toEqual([{ name: "ASSISTANT_AGENT", class_name: "AssistantAgent" }]);
    expect(wrangler.migrations).toEqual([{ tag: "v1", new_sqlite_classes: ["AssistantAgent"] }]);
    for (const file of ["src/tenants/assistant/agent.ts", "src/tenants/assistant/plugin.ts", "src/tenants/assistant/index.ts", "test/assistant.spec.ts"]) {
      expect(readFileSync(join(root, file), "utf8")).not.toMatch(/__[A-Za-z]+__/);
    }
  });

  it("adds a tenant: its files, its binding and next migration, its registration, nothing else", async () => {
    const root = join(scratch(), "agents");
    await createRepository({ dir: root });
    const read = (file) => readFileSync(join(root, file), "utf8");
    const untouched = ["src/env.ts", "src/worker.ts", "src/turn-workflow.ts", "src/policy.ts", "package.json"].map((f) => [f, read(f)]);
    const { written, edited } = addTenant({ root, tenant: "weather" });
    expect(written.map((p) => p.slice(root.length + 1)).sort()).toEqual([
      "src/tenants/weather/agent.ts",
      "src/tenants/weather/index.ts",
      "src/tenants/weather/plugin.ts",
      "test/weather.spec.ts",
    ]);
    expect(edited.map((p) => p.slice(root.length + 1))).toEqual(["wrangler.jsonc", "src/tenants.ts"]);
    for (const [file, text] of untouched) expect(read(file)).toBe(text);
    const wrangler = plain(parseJsonc(read("wrangler.jsonc")));
    expect(wrangler.migrations.at(-1)).toEqual({ tag: "v2", new_sqlite_classes: ["WeatherAgent"] });
    expect(read("src/tenants.ts")).toContain("  weather: weatherTenant,");
    expect(read("src/tenants/weather/agent.ts")).toContain("export class WeatherAgent extends DynamicAgent<Env>");
  });

  it("words each tenant's card after its name, not the skeleton's tool", async () => {
    const root = join(scratch(), "agents");
    await createRepository({ dir: root });
    addTenant({ root, tenant: "trip-planner" });
    const card = readFileSync(join(root, "src/tenants/trip-planner/index.ts"), "utf8");
    expect(card).toContain('name: "Trip Planner"');
    expect(card).toContain('description: "Trip Planner: answers questions about trip planner in a sentence or two, with its tools."');
    expect(card).toContain('id: "trip-planner"');
    expect(card).not.toMatch(/lookup|Look something up/i);
  });

  it("adds a delegating tenant: its subagent class exported, in the pool's additionalExports, and its round words", async () => {
    const root = join(scratch(), "agents");
    await createRepository({ dir: root });
    const read = (file) => readFileSync(join(root, file), "utf8");
    const { written, edited } = addTenant({ root, tenant: "research", kind: "round" });
    expect(written.map((p) => p.slice(root.length + 1)).sort()).toEqual([
      "src/tenants/research/agent.ts",
      "src/tenants/research/index.ts",
      "src/tenants/research/plugin.ts",
      "src/tenants/research/policy.ts",
      "test/research.spec.ts",
    ]);
    expect(edited.map((p) => p.slice(root.length + 1))).toEqual(["wrangler.jsonc", "src/tenants.ts", "vitest.config.ts"]);
    expect(read("src/tenants/research/index.ts")).toContain('export { ResearchAgent, ResearchSubagent } from "./agent.js";');
    expect(read("src/tenants/research/agent.ts")).toContain("return { subagentClass: ResearchSubagent };");
    expect(read("src/tenants/research/policy.ts")).toContain("notStarted:");
    expect(read("vitest.config.ts")).toContain('      additionalExports: {\n        ResearchSubagent: "DurableObject",\n      },\n');
    // The subagent is a facet: never bound, never migrated.
    const wrangler = plain(parseJsonc(read("wrangler.jsonc")));
    expect(wrangler.durable_objects.bindings.map((b) => b.class_name)).toEqual(["AssistantAgent", "ResearchAgent"]);
    expect(JSON.stringify(wrangler.migrations)).not.toContain("Subagent");
    // A second delegating tenant joins the same block.
    addTenant({ root, tenant: "digest", kind: "round" });
    expect(read("vitest.config.ts")).toContain('        ResearchSubagent: "DurableObject",\n        DigestSubagent: "DurableObject",\n      },');
  });

  it("adds an MCP tenant: its agent reads MCP_SERVERS through src/mcp.ts, and the pool serves its spec's server", async () => {
    const root = join(scratch(), "agents");
    await createRepository({ dir: root });
    const read = (file) => readFileSync(join(root, file), "utf8");
    const { written, edited } = addTenant({ root, tenant: "travel", kind: "mcp" });
    expect(written.map((p) => p.slice(root.length + 1)).sort()).toEqual(["src/tenants/travel/agent.ts", "src/tenants/travel/index.ts", "test/travel.spec.ts"]);
    expect(edited.map((p) => p.slice(root.length + 1))).toEqual(["wrangler.jsonc", "src/tenants.ts", "vitest.config.ts"]);
    expect(read("src/tenants/travel/agent.ts")).toContain("mcp: mcpFromEnv(this.env),");
    expect(read("test/travel.spec.ts")).toContain('{ name: "travel__lookup", args: { query: "Paris" } }');
    const pool = read("vitest.config.ts");
    expect(pool).toContain('const mcpServers: Array<ReturnType<typeof testMcpServer>> = [\n  testMcpServer("travel", [\n');
    expect(pool).toContain("    handler: ({ query }) => `nothing yet about ");
    expect(() => withMcpServer(pool, { tenant: "travel" })).toThrow(/already has testMcpServer\("travel"/);
    // An MCP server's name is at most 24 characters, and the spec's server is named after the tenant.
    expect(() => addTenant({ root, tenant: "a-tenant-name-of-thirty-chars", kind: "mcp" })).toThrow(/at most 24 characters/);
    expect(existsSync(join(root, "src/tenants/a-tenant-name-of-thirty-chars"))).toBe(false);
  });

  it("says what to add by hand when the pool's config has no block to add to, and writes nothing", async () => {
    expect(() => withSubagentExport("export default {};\n", "ResearchSubagent")).toThrow(
      `vitest.config.ts: cannot find where to add additionalExports: { ResearchSubagent: "DurableObject" } in cloudflareTest's options; add it by hand`,
    );
    const root = join(scratch(), "agents");
    await createRepository({ dir: root });
    writeFileSync(join(root, "vitest.config.ts"), "export default {};\n");
    const registry = readFileSync(join(root, "src/tenants.ts"), "utf8");
    expect(() => addTenant({ root, tenant: "research", kind: "round" })).toThrow(/add it by hand/);
    expect(readFileSync(join(root, "src/tenants.ts"), "utf8")).toBe(registry);
    expect(existsSync(join(root, "src/tenants/research"))).toBe(false);
  });

  it("refuses, writing nothing, a tenant that is there already or a folder that is not empty", async () => {
    const root = join(scratch(), "agents");
    await createRepository({ dir: root });
    const wrangler = readFileSync(join(root, "wrangler.jsonc"), "utf8");
    expect(() => addTenant({ root, tenant: "assistant" })).toThrow(/already binds ASSISTANT_AGENT/);
    expect(readFileSync(join(root, "wrangler.jsonc"), "utf8")).toBe(wrangler);
    writeFileSync(join(root, "test/weather.spec.ts"), "mine");
    expect(() => addTenant({ root, tenant: "weather" })).toThrow(/test\/weather\.spec\.ts/);
    expect(readFileSync(join(root, "wrangler.jsonc"), "utf8")).toBe(wrangler);
    await expect(createRepository({ dir: root })).rejects.toThrow(/not empty/);
    const elsewhere = join(scratch(), "other");
    await expect(createRepository({ dir: elsewhere, tenant: "Bad Name" })).rejects.toThrow(/lower-case/);
    expect(existsSync(elsewhere)).toBe(false);
  });

  it("reads --core's path from the folder it runs in, writes it relative to the new repository, and passes a version as it is", () => {
    const clone = scratch();
    writeFileSync(join(clone, "dynamicagents-core-0.1.0.tgz"), "a tarball");
    const root = join(clone, "..", "my-agents");
    // As README.md "Your first agent" runs it in a clone: `new ../my-agents --core file:dynamicagents-core-0.1.0.tgz`.
    const cloneName = clone.split(/[\\/]/).pop();
    for (const given of [
      "file:dynamicagents-core-0.1.0.tgz",
      "./dynamicagents-core-0.1.0.tgz",
      "dynamicagents-core-0.1.0.tgz",
      `file:${clone}/dynamicagents-core-0.1.0.tgz`,
    ]) {
      expect(coreDependency(given, { cwd: clone, root }), given).toBe(`file:../${cloneName}/dynamicagents-core-0.1.0.tgz`);
    }
    expect(coreDependency("^0.1.0", { cwd: clone, root })).toBe("^0.1.0");
    expect(coreDependency(undefined, { cwd: clone, root })).toBeUndefined();
  });

  it("refuses a --core path where nothing is, before it writes anything", async () => {
    const here = scratch();
    const root = join(here, "agents");
    await expect(createRepository({ dir: root, core: "file:../nowhere/dynamicagents-core-0.1.0.tgz", cwd: here })).rejects.toThrow(
      `--core file:../nowhere/dynamicagents-core-0.1.0.tgz: ${join(here, "..", "nowhere", "dynamicagents-core-0.1.0.tgz")} does not exist (a path is read from the folder you run this in, ${here})`,
    );
    expect(existsSync(root)).toBe(false);
    // The bin says so too, and exits 1.
    const run = promisify(execFile);
    await expect(run(process.execPath, [MAIN, "new", "agents", "--core", "./missing.tgz"], { cwd: here })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`--core ./missing.tgz: ${join(here, "missing.tgz")} does not exist`),
    });
    expect(existsSync(root)).toBe(false);
  });

  it("runs as the bin, and prints its usage on a wrong command", async () => {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, [MAIN, "keys"]);
    expect(JSON.parse(stdout)).toMatchObject({ kty: "OKP", crv: "Ed25519" });
    await expect(run(process.execPath, [MAIN, "frobnicate"])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("usage:") });
    // One kind of tenant at a time.
    await expect(run(process.execPath, [MAIN, "add-tenant", "both", "--round", "--mcp"], { cwd: scratch() })).rejects.toMatchObject({ code: 2 });
  });
});

describe("README.md's clone route, which check:starter runs as written", () => {
  it("packs this version and names the tarball npm pack writes", () => {
    const route = readCloneRoute(fileURLToPath(new URL("../../README.md", import.meta.url)));
    const commands = route.map((c) => ("cd" in c ? `cd ${c.cd}` : c.run));
    const tarball = `${own.name.replace("@", "").replace("/", "-")}-${own.version}.tgz`;
    expect(commands).toEqual([
      "npm install",
      "npm pack",
      `node cli/main.mjs new ../my-agents --core file:${tarball}`,
      "cd ../my-agents",
      "npm install",
      "npm test",
    ]);
  });

  it("reads the block after the marker: comments dropped, `&&` split, `cd` kept apart", () => {
    const readme = ["# x", MARKER, "```bash", "npm pack   # builds dist/", "# a whole comment", "cd a && npm test", "```", "```bash", "later", "```"].join(
      "\n",
    );
    expect(cloneRoute(readme)).toEqual([{ run: "npm pack" }, { cd: "a" }, { run: "npm test" }]);
    expect(() => cloneRoute("# no marker\n")).toThrow(/has no line <!-- check:starter runs this block as written -->/);
  });
});
