// What takes the room in the reference bundle, read from the esbuild metafile
// that `wrangler deploy --dry-run --metafile` writes (scripts/check/bundle-size.mjs).
//
// The bundle is not minified, so esbuild heads each input's code with a
// `// <path>` line: cutting the bundle there gives each package's own text,
// gzipped alone. Parts gzipped alone add up to more than the whole (gzip finds
// less to share), so the figures rank the parts; they are not shares of the total.
import { gzipSync } from "node:zlib";

/** The package an input belongs to (`zod`, `@ai-sdk/provider-utils`), or its first two folders (`src/host`). */
function packageOf(input) {
  const inside = [...input.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)].map((m) => m[1]);
  if (inside.length > 0) return inside.join(" > ");
  const parts = input.split("/");
  return parts.length > 2 ? parts.slice(0, 2).join("/") : input;
}

function outputOf(meta, outputFile) {
  const output = Object.entries(meta.outputs).find(([path]) => path.endsWith(`/${outputFile}`))?.[1];
  if (!output) throw new Error(`the metafile has no output ${outputFile}`);
  return output;
}

/** The bundle's text, cut at each input's `// <path>` heading: input path → its code. */
function textPerInput(bundle, inputs) {
  const known = new Set(inputs);
  const texts = new Map();
  let current = "(bundle preamble)";
  for (const line of bundle.split("\n")) {
    const heading = line.startsWith("// ") ? line.slice(3) : undefined;
    if (heading !== undefined && known.has(heading)) current = heading;
    texts.set(current, `${texts.get(current) ?? ""}${line}\n`);
  }
  return texts;
}

/**
 * The `limit` largest packages (and folders of ours), then the `limit` largest
 * inputs, each gzipped alone and raw (esbuild's bytes in the output), as lines.
 */
export function topInputs(meta, outputFile, bundle, limit) {
  const output = outputOf(meta, outputFile);
  const inputs = Object.entries(output.inputs).map(([path, { bytesInOutput }]) => ({ path, raw: bytesInOutput }));
  const texts = textPerInput(
    bundle,
    inputs.map((i) => i.path),
  );
  const packages = new Map();
  for (const input of inputs) {
    const name = packageOf(input.path);
    const entry = packages.get(name) ?? { path: name, raw: 0, text: "" };
    entry.raw += input.raw;
    entry.text += texts.get(input.path) ?? "";
    packages.set(name, entry);
  }
  const gzipped = (rows) =>
    rows
      .map((row) => ({ ...row, gz: gzipSync(row.text ?? texts.get(row.path) ?? "").byteLength }))
      .sort((a, b) => b.gz - a.gz)
      .slice(0, limit);
  const line = ({ path, raw, gz }) => `  ${gz.toLocaleString("en-US").padStart(9)} gz ${raw.toLocaleString("en-US").padStart(10)} raw  ${path}`;
  return [
    `bundle: the ${limit} largest packages (gzipped alone, and raw bytes in the bundle):`,
    ...gzipped([...packages.values()]).map(line),
    `bundle: the ${limit} largest modules:`,
    ...gzipped(inputs).map(line),
  ];
}

/**
 * Every module in the bundle whose path contains `fragment`, with the modules
 * in the bundle that import it and by which specifier, as lines. (The metafile
 * also lists inputs tree-shaking dropped whole: they are left out.)
 */
export function importersOf(meta, outputFile, fragment) {
  const kept = new Set(Object.entries(outputOf(meta, outputFile).inputs).flatMap(([path, { bytesInOutput }]) => (bytesInOutput > 0 ? [path] : [])));
  const lines = [];
  for (const path of [...kept].filter((p) => p.includes(fragment))) {
    lines.push(`bundle: ${path}`);
    for (const [importer, { imports }] of Object.entries(meta.inputs)) {
      if (!kept.has(importer)) continue;
      for (const i of imports) if (i.path === path) lines.push(`    <- ${importer} ("${i.original ?? i.path}")`);
    }
  }
  return lines.length > 0 ? lines : [`bundle: no module in the bundle has ${JSON.stringify(fragment)} in its path`];
}

/**
 * wrangler matches an `alias` key against an import's specifier exactly, so a
 * relative key (`../locales/index.js`) replaces that specifier in every
 * package that writes it. Each is meant for one package: a second package
 * importing through it would get a stand-in it never asked for.
 */
export function aliasesReachingOtherPackages(meta, stubFolder) {
  const owners = new Map();
  for (const [importer, { imports }] of Object.entries(meta.inputs)) {
    for (const i of imports) {
      if (!i.path.startsWith(stubFolder) || !i.original?.startsWith(".") || importer.startsWith(stubFolder)) continue;
      const key = `${i.original} -> ${i.path}`;
      owners.set(key, (owners.get(key) ?? new Set()).add(packageOf(importer)));
    }
  }
  return [...owners].filter(([, packages]) => packages.size > 1).map(([key, packages]) => `${key} is imported by ${[...packages].join(", ")}`);
}
