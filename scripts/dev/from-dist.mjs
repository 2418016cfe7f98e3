// Module resolution for the stack as the package ships it. scripts/dev imports
// the platform's own modules from `../../src/…/*.ts` (here, Node strips their
// types); the package ships no src/, only what it compiles to dist/. Registered
// by `dynamicagents start` (cli/start.mjs) before the stack loads, this hook
// sends an import of a src/ module of this package that does not exist to its
// dist/ twin (`src/a2a/wire.ts` → `dist/a2a/wire.js`). Where src/ exists (this
// repository) it changes nothing, so both run the same files.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const PACKAGE = new URL("../../", import.meta.url).href;
const SRC = `${PACKAGE}src/`;
const DIST = `${PACKAGE}dist/`;

/**
 * The dist/ module a missing src/ module compiles to, or undefined.
 * @param {string} specifier @param {string | undefined} parentURL
 */
export function distTwin(specifier, parentURL) {
  if (!parentURL?.startsWith(PACKAGE) || !/^\.\.?\//.test(specifier) || !specifier.endsWith(".ts")) return undefined;
  const url = new URL(specifier, parentURL).href;
  if (!url.startsWith(SRC) || existsSync(fileURLToPath(url))) return undefined;
  return `${DIST}${url.slice(SRC.length).replace(/\.ts$/, ".js")}`;
}

/** Node's resolve hook (module.register). @type {import("node:module").ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(distTwin(specifier, context.parentURL) ?? specifier, context);
}
