#!/usr/bin/env node
// Import boundaries, checked on resolved paths rather than specifier text:
// every import, `import type`, `export … from`, `export * from`, `import()`
// and type-level `import("…")` is parsed with oxc-parser, resolved with
// oxc-resolver (`.js` → `.ts`, the package's own `exports` for
// `@dynamicagents/core/…`), and the file it lands on is held against RULES.
//
//   node scripts/check/boundaries.mjs                     the repository
//   node scripts/check/boundaries.mjs --root DIR          another tree (tests)
//   node scripts/check/boundaries.mjs --stdin-file-path src/db/x.ts < x.ts
//                                                         one file, its text on stdin
//   --json                                                violations as JSON on stdout
//
// Exit 0: no violation; 1: violations (or unresolvable imports, or parse errors); 2: usage.
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseSync } from "oxc-parser";
import { ResolverFactory } from "oxc-resolver";

const SELF = "@dynamicagents/core";
/** Folders whose code is held against the rules (everything else, test/ included, is free). */
const SCANNED = ["src", "reference", "scripts", "bench"];
const SOURCE = new Set([".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs"]);
const TEST_LIBRARIES = ["vitest", "cloudflare:test", "ai/test"];

/**
 * One rule: the files it applies to (`from`, minus `except`), and what they
 * may not reach. `layers` are folders of src/ (src/<layer>/…) named by the
 * resolved target; `allow` turns the list into the only folders of src/ a file
 * may reach; `packages` are bare specifiers (a package or a subpath, and
 * everything under it).
 */
export const RULES = [
  {
    id: "db-knows-no-protocol",
    from: ["src/db/"],
    deny: { layers: ["a2a", "worker", "host"], packages: ["@a2a-js/sdk"] },
    why: "storage knows no protocol: src/db must not import src/a2a, src/worker, src/host or @a2a-js/sdk",
  },
  {
    id: "a2a-is-a-leaf",
    from: ["src/a2a/"],
    allow: { layers: ["a2a", "errors"] },
    why: "src/a2a imports no other folder of src/ than src/errors",
  },
  {
    id: "errors-is-a-leaf",
    from: ["src/errors/"],
    allow: { layers: ["errors"], outsideSrc: false },
    why: "src/errors imports nothing of ours",
  },
  {
    id: "turn-knows-no-agent-class",
    from: ["src/turn/"],
    deny: { layers: ["host", "round", "subagent"] },
    why: "src/turn must not import an agent class (src/host, src/round, src/subagent)",
  },
  {
    id: "turn-speaks-the-boundary",
    from: ["src/turn/"],
    allow: { layers: ["turn", "a2a", "errors", "boundary", "telemetry"] },
    why: "src/turn reaches the caller's object only through src/boundary: it may import src/a2a, src/errors, src/boundary and src/telemetry",
  },
  {
    id: "data-flows-one-way",
    from: ["src/host/", "src/round/", "src/subagent/", "src/agent/", "src/plugin/", "src/subtasks/", "src/db/", "src/boundary/", "src/mcp/"],
    deny: { layers: ["worker", "turn"] },
    why: "edge → object → Workflow: the object's side never imports the edge (src/worker) or the Workflow (src/turn)",
  },
  {
    id: "loop-sits-below-the-object",
    from: ["src/round/"],
    deny: { layers: ["host"] },
    why: "the loop (src/round) sits below the caller's object and knows nothing of its class: it imports no src/host (nor, by data-flows-one-way, the edge or the Workflow)",
  },
  {
    id: "storage-knows-no-loop",
    from: ["src/db/"],
    deny: { layers: ["round"] },
    why: "storage (src/db) holds tables, rows and verdicts: it imports no src/round",
  },
  {
    id: "models-and-plugins-know-no-agent",
    from: ["src/agent/", "src/plugin/"],
    deny: { layers: ["host", "round"] },
    why: "models (src/agent) and plugins (src/plugin) know no caller's object and no loop: they import no src/host or src/round",
  },
  {
    id: "edge-stays-at-the-edge",
    from: ["src/worker/"],
    allow: { layers: ["worker", "a2a", "errors", "boundary", "telemetry"] },
    why: "src/worker (the edge) may import only src/a2a, src/errors, src/boundary and src/telemetry",
  },
  {
    id: "boundary-is-thin",
    from: ["src/boundary/"],
    allow: { layers: ["boundary", "a2a", "errors"] },
    why: "src/boundary may import only src/a2a and src/errors",
  },
  {
    id: "mcp-is-a-tool-source",
    from: ["src/mcp/"],
    allow: { layers: ["mcp", "plugin", "agent", "telemetry", "errors"] },
    why: "src/mcp turns MCP servers into a plugin's tools: it may import only src/plugin, src/agent (config), src/telemetry and src/errors",
  },
  {
    id: "telemetry-is-a-leaf",
    from: ["src/telemetry/"],
    allow: { layers: ["telemetry"], outsideSrc: false },
    why: "src/telemetry (the event catalogue, its ids and sinks) imports nothing else of ours: every layer may emit",
  },
  {
    id: "no-test-harness-at-runtime",
    from: ["src/"],
    except: ["src/testing/"],
    deny: { layers: ["testing"] },
    why: "runtime code (src/ outside src/testing) never imports src/testing",
  },
  {
    id: "test-libraries-only-in-tests",
    from: [""],
    except: ["src/testing/", "test/"],
    exceptFiles: /(^|\/)vitest\.config\.[cm]?[jt]s$/,
    deny: { packages: TEST_LIBRARIES },
    why: "vitest, cloudflare:test and ai/test are imported only under src/testing/ and test/",
  },
  {
    id: "reference-uses-public-subpaths",
    from: ["reference/"],
    publicOnly: true,
    why: `reference/ reaches src/ only through public subpaths (${SELF}/…), never a relative path`,
  },
];

const isBare = (specifier) => !specifier.startsWith(".") && !specifier.startsWith("/");
const packageOf = (specifier) => {
  if (specifier.includes(":")) return specifier; // cloudflare:test, node:fs
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
};
const underPackage = (specifier, name) => specifier === name || specifier.startsWith(`${name}/`);
const posix = (path) => path.split(sep).join("/");
/** src/<layer>/… → layer; a file directly in src/ has layer "". */
const layerOf = (path) => (path.startsWith("src/") ? (path.slice(4).includes("/") ? path.slice(4, path.indexOf("/", 4)) : "") : undefined);

function applies(rule, file) {
  if (!rule.from.some((prefix) => file.startsWith(prefix))) return false;
  if (rule.except?.some((prefix) => file.startsWith(prefix))) return false;
  return !rule.exceptFiles?.test(file);
}

/** Why `edge` breaks `rule`, or undefined. `edge.target` is repository-relative, or undefined for a package. */
function breaks(rule, edge) {
  if (edge.target === undefined) {
    const packages = rule.deny?.packages ?? [];
    return packages.some((name) => underPackage(edge.specifier, name)) ? "(a forbidden package)" : undefined;
  }
  if (edge.target.startsWith("node_modules/")) return undefined;
  const layer = layerOf(edge.target);
  if (rule.publicOnly) {
    return layer !== undefined && !edge.specifier.startsWith(`${SELF}/`) ? `→ ${edge.target}, by a relative path` : undefined;
  }
  if (rule.deny?.layers?.includes(layer)) return `→ ${edge.target}`;
  if (rule.allow) {
    if (layer === undefined) return rule.allow.outsideSrc === false ? `→ ${edge.target}` : undefined;
    if (!rule.allow.layers.includes(layer)) return `→ ${edge.target}`;
  }
  return undefined;
}

/** Every module specifier in a parsed program, with where it stands and how it imports. */
function specifiersOf(program) {
  const found = [];
  const literal = (node) => {
    if (node?.type === "Literal" && typeof node.value === "string") return node.value;
    if (node?.type === "TemplateLiteral" && node.expressions.length === 0) return node.quasis[0].value.cooked;
    if (node?.type === "TSLiteralType") return literal(node.literal);
    return undefined;
  };
  const add = (node, kind) => {
    const specifier = literal(node);
    if (specifier !== undefined) found.push({ specifier, kind, start: node.start });
  };
  const visit = (node) => {
    if (Array.isArray(node)) {
      for (const child of node) visit(child);
      return;
    }
    if (node === null || typeof node !== "object") return;
    switch (node.type) {
      case "ImportDeclaration":
        add(node.source, node.importKind === "type" ? "import type" : "import");
        break;
      case "ExportNamedDeclaration":
        if (node.source) add(node.source, node.exportKind === "type" ? "export type … from" : "export … from");
        break;
      case "ExportAllDeclaration":
        add(node.source, node.exportKind === "type" ? "export type * from" : "export * from");
        break;
      case "ImportExpression":
        add(node.source, "import()");
        break;
      case "TSImportType":
        add(node.source ?? node.argument, 'type import("…")');
        break;
      case "TSExternalModuleReference":
        add(node.expression, "import = require()");
        break;
      case "CallExpression":
        if (node.callee?.type === "Identifier" && node.callee.name === "require" && node.arguments.length === 1) add(node.arguments[0], "require()");
        break;
    }
    for (const key in node) {
      if (key !== "type" && key !== "start" && key !== "end") visit(node[key]);
    }
  };
  visit(program);
  return found;
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function position(starts, offset) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo] + 1 };
}

function listSources(root) {
  const out = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path);
      else if (SOURCE.has(extname(entry.name))) out.push(path);
    }
  };
  for (const dir of SCANNED) walk(dir);
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.isFile() && SOURCE.has(extname(entry.name))) out.push(entry.name);
  }
  return out.sort();
}

/**
 * Checks `files` (repository-relative; `texts` may supply a file's text, as
 * for stdin) under `root`. Returns { violations, files, imports }.
 */
export function checkBoundaries({ root, files, texts = new Map() }) {
  const realRoot = realpathSync(root);
  const resolver = new ResolverFactory({
    extensionAlias: { ".js": [".ts", ".tsx", ".js"], ".mjs": [".mts", ".mjs"], ".cjs": [".cts", ".cjs"] },
    extensions: [".ts", ".tsx", ".mts", ".js", ".mjs", ".json"],
    // With `development`, the package's own subpaths are held against the
    // rules as their sources, not as the built dist/ (package.json's exports).
    conditionNames: ["development", "types", "import", "default"],
    builtinModules: true,
  });
  const violations = [];
  let imports = 0;
  for (const file of files) {
    const rules = RULES.filter((rule) => applies(rule, file));
    const text = texts.get(file) ?? readFileSync(join(realRoot, file), "utf8");
    const parsed = parseSync(file, text, { sourceType: "module" });
    const starts = lineStarts(text);
    if (parsed.errors.length > 0) {
      const where = position(starts, parsed.errors[0].labels?.[0]?.start ?? 0);
      violations.push({ file, ...where, rule: "parse", message: `cannot parse: ${parsed.errors[0].message}`, specifier: "" });
      continue;
    }
    for (const found of specifiersOf(parsed.program)) {
      imports++;
      const where = position(starts, found.start);
      const { specifier } = found;
      let target;
      if (!isBare(specifier) || packageOf(specifier) === SELF) {
        const result = resolver.sync(dirname(join(realRoot, file)), specifier);
        if (!result.path) {
          const message = `${found.kind} ${JSON.stringify(specifier)} does not resolve (${result.error})`;
          violations.push({ file, ...where, rule: "resolvable", message, specifier });
          continue;
        }
        target = posix(relative(realRoot, realpathSync(result.path)));
      }
      for (const rule of rules) {
        const reason = breaks(rule, { specifier, target });
        if (reason === undefined) continue;
        const message = `${found.kind} ${JSON.stringify(specifier)} ${reason}: ${rule.why}`;
        violations.push({ file, ...where, rule: rule.id, message, specifier, target });
      }
    }
  }
  return { violations, files: files.length, imports };
}

function main(argv) {
  let root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  let stdinPath;
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--root") root = resolve(argv[++i] ?? "");
    else if (arg === "--stdin-file-path") stdinPath = argv[++i];
    else if (arg.startsWith("--stdin-file-path=")) stdinPath = arg.slice("--stdin-file-path=".length);
    else if (arg.startsWith("--root=")) root = resolve(arg.slice("--root=".length));
    else if (arg === "--json") json = true;
    else {
      process.stderr.write(`boundaries: unknown argument ${arg}\nusage: node scripts/check/boundaries.mjs [--root DIR] [--stdin-file-path PATH] [--json]\n`);
      return 2;
    }
  }
  const texts = new Map();
  let files;
  if (stdinPath !== undefined) {
    const file = posix(relative(root, resolve(root, stdinPath)));
    texts.set(file, readFileSync(0, "utf8"));
    files = [file];
  } else {
    files = listSources(root);
  }
  const started = performance.now();
  const result = checkBoundaries({ root, files, texts });
  const ms = Math.round(performance.now() - started);
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    for (const v of result.violations) process.stdout.write(`${v.file}:${v.line}:${v.column}  ${v.rule}  ${v.message}\n`);
    const summary = `${result.files} files, ${result.imports} imports, ${ms} ms`;
    process.stdout.write(
      result.violations.length === 0
        ? `boundaries: OK (${summary})\n`
        : `boundaries: ${result.violations.length} violation(s) in ${new Set(result.violations.map((v) => v.file)).size} file(s) (${summary})\n`,
    );
  }
  return result.violations.length === 0 ? 0 : 1;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
