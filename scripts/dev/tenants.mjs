// The tenants `npm start` serves, learnt from the deployment's own tenant
// registry: the module the Worker is built from, never a list kept here. So
// the same stack runs this repository's reference deployment and an author's
// repository (`npx dynamicagents start`).
//
// Where the registry is: package.json `"dynamicagents": { "tenants": "<path>" }`
// when set; else `tenants.ts` (or .mts, .js, .mjs) beside wrangler's `main`
// (reference/worker.ts → reference/tenants.ts; the starter's src/worker.ts →
// src/tenants.ts). It is a `Record<string, TenantConfig>`, exported as
// `tenants` (the reference) or as the default export (the starter, and what
// `dynamicagents add-tenant` writes to, cli/registry.mjs).
//
// How it is read: bundled with the esbuild of the deployment's own wrangler
// (the one that builds the Worker: same resolution, tsconfig paths, aliases
// and text rules), `cloudflare:*` modules stubbed, then run in a child Node
// process that prints each tenant's name and, for a tenant with an
// `enabled(env)` predicate, its value with the Worker's variables as
// `wrangler dev` gives them: wrangler.jsonc `vars`, then the dev secrets
// file (`.dev.vars`), then what the stack passes itself. The env reaches the
// child on its stdin, never its command line or environment.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseJsonc, plain } from "../../cli/jsonc.mjs";
import { parseDotenv } from "./dev-vars.mjs";

const WRANGLER_CONFIGS = ["wrangler.jsonc", "wrangler.json"];
const REGISTRY_NAMES = ["tenants.ts", "tenants.mts", "tenants.js", "tenants.mjs"];
const OVERRIDE = `package.json "dynamicagents": { "tenants": "<path>" }`;
const CHILD_TIMEOUT_MS = 30_000;

export class RegistryError extends Error {
  name = "RegistryError";
}

/**
 * @typedef {{ name: string, enabled: boolean, predicate: boolean }} RegistryTenant
 *   `predicate`: the tenant has an `enabled(env)`; `enabled`: what it said (true without one)
 * @typedef {{ file: string, shown: string, source: string, tenants: RegistryTenant[], served: string[] }} Registry
 *   `shown`: the file relative to the deployment's root; `source`: how it was found
 */

/**
 * Where the deployment's tenant registry is, and how that was decided.
 * @param {string} root the deployment's repository (package.json, wrangler.jsonc)
 * @returns {{ file: string, source: string }}
 */
export function findRegistry(root) {
  const manifest = readJson(join(root, "package.json"));
  const override = manifest?.dynamicagents?.tenants;
  if (override !== undefined) {
    if (typeof override !== "string" || override === "")
      throw new RegistryError(`package.json: "dynamicagents.tenants" must be the path of the tenant registry, got ${JSON.stringify(override)}`);
    const file = resolve(root, override);
    if (!existsSync(file))
      throw new RegistryError(`the tenant registry ${override} named by package.json "dynamicagents.tenants" does not exist (looked for ${file})`);
    return { file, source: `named by package.json "dynamicagents.tenants"` };
  }
  const config = WRANGLER_CONFIGS.map((name) => join(root, name)).find((file) => existsSync(file));
  if (!config) {
    throw new RegistryError(
      `no ${WRANGLER_CONFIGS.join(" or ")} in ${root}: the tenant registry is found beside wrangler's \`main\`; name it with ${OVERRIDE} otherwise`,
    );
  }
  const main = wranglerConfig(config).main;
  if (typeof main !== "string" || main === "") throw new RegistryError(`${relative(root, config)} has no \`main\`: name the tenant registry with ${OVERRIDE}`);
  const beside = dirname(resolve(dirname(config), main));
  const tried = REGISTRY_NAMES.map((name) => join(beside, name));
  const file = tried.find((candidate) => existsSync(candidate));
  if (!file) {
    throw new RegistryError(
      `no tenant registry beside ${relative(root, config)}'s main ${main}: tried ${tried.map((t) => relative(root, t)).join(", ")}; ` +
        `write one there (a map of tenants, exported as \`tenants\` or as the default) or name it with ${OVERRIDE}`,
    );
  }
  return { file, source: `beside ${relative(root, config)}'s main ${main}` };
}

/**
 * The Worker's variables as `wrangler dev` gives them to `enabled(env)`:
 * wrangler.jsonc `vars`, the dev secrets file over them, then `vars` of this run.
 * @param {string} root @param {{ devVarsFile?: string, vars?: Record<string, string> }} [options]
 */
function workerVars(root, { devVarsFile, vars = {} } = {}) {
  const config = WRANGLER_CONFIGS.map((name) => join(root, name)).find((file) => existsSync(file));
  const fromConfig = config ? (wranglerConfig(config).vars ?? {}) : {};
  const fromFile = devVarsFile && existsSync(devVarsFile) ? parseDotenv(readFileSync(devVarsFile, "utf8")) : {};
  return { ...fromConfig, ...fromFile, ...vars };
}

/**
 * Reads the deployment's tenant registry: every tenant, whether it is served
 * with these variables, and where the list came from.
 * @param {{ root: string, devVarsFile?: string, vars?: Record<string, string>, node?: string }} options
 *   `node`: the Node that runs the registry (default this one)
 * @returns {Promise<Registry>}
 */
export async function loadTenants({ root, devVarsFile, vars, node = process.execPath }) {
  const { file, source } = findRegistry(root);
  const shown = relative(root, file) || file;
  const esbuild = await wranglersEsbuild(root);
  const work = mkdtempSync(join(tmpdir(), "dynamicagents-tenants-"));
  try {
    const bundle = join(work, "registry.mjs");
    await bundleRegistry(esbuild, { root, file, shown, outfile: bundle });
    const printed = await runChild(node, bundle, JSON.stringify(workerVars(root, { devVarsFile, vars })), shown);
    const tenants = /** @type {RegistryTenant[]} */ (printed.tenants);
    if (tenants.length === 0)
      throw new RegistryError(`the tenant registry ${shown} (${source}) lists no tenant: \`npx dynamicagents add-tenant NAME\` adds one`);
    return { file, shown, source, tenants, served: tenants.filter((t) => t.enabled).map((t) => t.name) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** "reference/tenants.ts (beside wrangler.jsonc's main reference/worker.ts)": where the list came from. */
const registryOrigin = (/** @type {Registry} */ registry) => `the tenant registry ${registry.shown} (${registry.source})`;

/** One line: where the registry is, the tenants served, and those it holds but does not serve with these variables. */
export function describeTenants(/** @type {Registry} */ registry) {
  const off = registry.tenants.filter((t) => !t.enabled).map((t) => t.name);
  const served = registry.served.length ? `serves ${registry.served.join(", ")}` : "serves no tenant";
  return `${registry.shown} (${registry.source}) ${served}${off.length ? `; not now, their enabled(env) false with wrangler.jsonc vars and the dev secrets: ${off.join(", ")}` : ""}`;
}

/** Why a tenant asked for cannot be talked to: what the registry holds instead, and where it is. */
export function unknownTenant(/** @type {Registry} */ registry, /** @type {string} */ tenant) {
  const entry = registry.tenants.find((t) => t.name === tenant);
  if (entry) {
    return `tenant ${JSON.stringify(tenant)} is in ${registryOrigin(registry)} but not served now: its enabled(env) is false with wrangler.jsonc vars and the dev secrets file (e.g. set its variable in .dev.vars)`;
  }
  return `unknown tenant ${JSON.stringify(tenant)}: ${registryOrigin(registry)} lists ${registry.tenants.map((t) => t.name).join(", ")}${registry.served.length ? `; choose ${registry.served.join(" or ")}` : ""}`;
}

/**
 * Whether the Worker's own code reads the variable `name`: the text of wrangler's `main` bundled with
 * what it imports from the repository (packages left out, so `@dynamicagents/core` never counts), by
 * the deployment's own esbuild. A module nothing imports is not in the bundle, so a starter's
 * src/mcp.ts counts only once a tenant uses it. When the Worker cannot be bundled here, `true`:
 * wrangler will say what is wrong, and the stack does as it did before it asked.
 * @param {string} root
 * @param {string} name
 */
export async function workerReads(root, name) {
  const config = WRANGLER_CONFIGS.map((file) => join(root, file)).find((file) => existsSync(file));
  const main = config ? wranglerConfig(config).main : undefined;
  if (!config || typeof main !== "string") return true;
  try {
    const esbuild = await wranglersEsbuild(root);
    const { outputFiles } = await esbuild.build({
      entryPoints: [resolve(dirname(config), main)],
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      packages: "external",
      external: ["cloudflare:*", "node:*"],
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["browser", "module", "main"],
      loader: { ".sql": "text", ".txt": "text", ".html": "text", ".bin": "binary", ".wasm": "binary", ...ruleLoaders(config) },
      logLevel: "silent",
    });
    return outputFiles.some((file) => file.text.includes(name));
  } catch {
    return true;
  }
}

/** The esbuild wrangler builds the Worker with: resolved from the deployment's own wrangler package. */
async function wranglersEsbuild(root) {
  let wranglerManifest;
  try {
    wranglerManifest = createRequire(join(root, "package.json")).resolve("wrangler/package.json");
  } catch {
    throw new RegistryError(`wrangler is not installed in ${root} (npm install): the tenant registry is bundled with its esbuild`);
  }
  let entry;
  try {
    entry = createRequire(wranglerManifest).resolve("esbuild");
  } catch {
    throw new RegistryError(`the wrangler at ${dirname(wranglerManifest)} has no esbuild to bundle the tenant registry with`);
  }
  const loaded = await import(pathToFileURL(entry).href);
  return /** @type {typeof import("esbuild")} */ (loaded.default ?? loaded);
}

/**
 * The registry and a few lines that print it, as one ES module for Node.
 * @param {typeof import("esbuild")} esbuild
 * @param {{ root: string, file: string, shown: string, outfile: string }} options
 */
async function bundleRegistry(esbuild, { root, file, shown, outfile }) {
  const config = WRANGLER_CONFIGS.map((name) => join(root, name)).find((f) => existsSync(f));
  const { alias = {} } = config ? wranglerConfig(config) : {};
  const registryUrl = JSON.stringify(file);
  const entry = [
    `import * as registry from ${registryUrl};`,
    `const map = registry.tenants ?? registry.default;`,
    `if (!map || typeof map !== "object") throw new Error("exports no tenant map: export it as \`tenants\` or as the default");`,
    `const env = JSON.parse(await new Promise((done) => { let text = ""; process.stdin.setEncoding("utf8"); process.stdin.on("data", (c) => (text += c)); process.stdin.on("end", () => done(text || "{}")); }));`,
    `const tenants = [];`,
    `for (const [name, config] of Object.entries(map)) {`,
    `  const predicate = typeof config?.enabled === "function";`,
    `  tenants.push({ name, predicate, enabled: predicate ? Boolean(await config.enabled(env)) : true });`,
    `}`,
    `process.stdout.write(JSON.stringify({ tenants }));`,
  ].join("\n");
  try {
    await esbuild.build({
      stdin: { contents: entry, resolveDir: root, sourcefile: "registry-entry.mjs", loader: "js" },
      bundle: true,
      outfile,
      format: "esm",
      platform: "node",
      target: "node20",
      // As wrangler resolves for workerd.
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["browser", "module", "main"],
      // esbuild's `alias` takes package names only; a relative key goes to relativeAliases.
      alias: Object.fromEntries(
        Object.entries(alias)
          .filter(([name]) => !name.startsWith("."))
          .map(([name, target]) => [name, String(target).startsWith(".") ? resolve(root, String(target)) : target]),
      ),
      // wrangler's default rules, and what wrangler.jsonc's `rules` add (Text and Data only).
      loader: { ".sql": "text", ".txt": "text", ".html": "text", ".bin": "binary", ".wasm": "binary", ...ruleLoaders(config) },
      // Node's own modules stay imports; the Worker's nodejs_compat gives it the same ones.
      external: ["node:*"],
      plugins: [cloudflareStubs(), relativeAliases(alias, root)],
      logLevel: "silent",
      // Node runs ES modules whose CommonJS parts still call require.
      banner: { js: `import { createRequire as __daCreateRequire } from "node:module"; const require = __daCreateRequire(import.meta.url);` },
    });
  } catch (error) {
    const messages = (error.errors ?? []).slice(0, 5).map((e) => `  ${e.location ? `${e.location.file}:${e.location.line}: ` : ""}${e.text}`);
    throw new RegistryError(`could not bundle the tenant registry ${shown}:\n${messages.join("\n") || `  ${error.message}`}`);
  }
}

/** wrangler.jsonc's `rules` of type Text or Data, as esbuild loaders by extension. */
function ruleLoaders(config) {
  if (!config) return {};
  /** @type {Record<string, "text" | "binary">} */
  const loaders = {};
  for (const rule of wranglerConfig(config).rules ?? []) {
    const loader = rule?.type === "Text" ? "text" : rule?.type === "Data" ? "binary" : undefined;
    if (!loader) continue;
    for (const glob of rule.globs ?? []) {
      const ext = /\*(\.[\w.]+)$/.exec(String(glob))?.[1];
      if (ext) loaders[ext] = loader;
    }
  }
  return loaders;
}

/**
 * `cloudflare:workers`, `cloudflare:email`, …: Worker-only modules. Each is a
 * stand-in whose every export is an empty class (agent classes extend
 * `DurableObject`, `WorkflowEntrypoint`): enough for the registry to load.
 * @returns {import("esbuild").Plugin}
 */
function cloudflareStubs() {
  return {
    name: "cloudflare-stubs",
    setup(build) {
      build.onResolve({ filter: /^cloudflare:/ }, (args) => ({ path: args.path, namespace: "cloudflare-stub" }));
      build.onLoad({ filter: /.*/, namespace: "cloudflare-stub" }, () => ({
        contents:
          'module.exports = new Proxy({}, { get: (cache, name) => name === "__esModule" || name === "then" ? undefined : (cache[name] ??= class {}) });',
        loader: "js",
      }));
    },
  };
}

/**
 * wrangler.jsonc `alias` keys that are relative specifiers (`../locales/index.js`,
 * reference/bundle-stubs/zod-locales.js): wrangler matches every key against an
 * import's specifier exactly, whoever imports it, and resolves the target from the root.
 * @param {Record<string, unknown>} alias
 * @param {string} root
 */
function relativeAliases(alias, root) {
  const relative = new Map(Object.entries(alias).filter(([name]) => name.startsWith(".")));
  return {
    name: "relative-aliases",
    /** @param {import("esbuild").PluginBuild} build */
    setup(build) {
      build.onResolve({ filter: /^\./ }, async (args) => {
        const target = relative.get(args.path);
        if (target === undefined) return undefined;
        const resolved = await build.resolve(String(target), { resolveDir: root, kind: args.kind });
        return { path: resolved.path, namespace: resolved.namespace, external: resolved.external, errors: resolved.errors };
      });
    },
  };
}

/** Runs the bundle; resolves to what it printed, or rejects naming the registry. */
function runChild(node, bundle, envJson, shown) {
  return new Promise((done, fail) => {
    const child = spawn(node, [bundle], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      fail(new RegistryError(`could not run the tenant registry ${shown} in ${node}: ${error.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        try {
          return done(JSON.parse(stdout));
        } catch {
          // said below
        }
      }
      const why = signal ? `was stopped (${signal}, after ${CHILD_TIMEOUT_MS / 1000} s at most)` : `exited ${code}`;
      const first = firstErrorLine(stderr);
      fail(new RegistryError(`the tenant registry ${shown} could not be read: loading it ${why}${first ? `: ${first}` : ""}`));
    });
    child.stdin.on("error", () => {}); // a child that fails early closes its stdin
    child.stdin.end(envJson);
  });
}

/** The thrown error's line in a Node stack trace on stderr. */
function firstErrorLine(stderr) {
  const lines = stderr.split("\n").map((line) => line.trim());
  return lines.find((line) => /^(?:\w*Error|Error)\b/.test(line)) ?? lines.find(Boolean) ?? "";
}

function wranglerConfig(file) {
  try {
    return plain(parseJsonc(readFileSync(file, "utf8"), file)) ?? {};
  } catch (error) {
    throw new RegistryError(`${file}: ${error.message}`);
  }
}

function readJson(file) {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new RegistryError(`${file} is not JSON: ${error.message}`);
  }
}
