// The HTTP+JSON router, derived from the method table (docs/protocol.md
// "HTTP+JSON"): each rule in its two forms, with the `{tenant}` prefix and
// without it (a2a.proto's other binding, which this deployment refuses as a
// request naming no tenant). Node loads it as it is, like `methods.ts`.
import { METHODS, type Method } from "./methods.ts";

/** A path parameter: one segment with no `:` (AIP-136: a `:` ends the path with a custom verb, so one inside an id travels as `%3A`). */
const PARAM = "([^/:]+)";

interface CompiledRoute {
  method: Method;
  verbs: readonly string[];
  /** Whether this is the form under `/{tenant}`. */
  tenanted: boolean;
  pattern: RegExp;
  /** The parameters' names, in the order the pattern captures them. */
  names: string[];
}

function compile(method: Method, tenanted: boolean): CompiledRoute {
  const { verbs, path } = METHODS[method].http;
  const names = tenanted ? ["tenant"] : [];
  let source = tenanted ? `/${PARAM}` : "";
  for (const [index, piece] of path.split(/\{(\w+)\}/).entries()) {
    if (index % 2 === 1) {
      names.push(piece);
      source += PARAM;
    } else source += piece.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return { method, verbs, tenanted, pattern: new RegExp(`^${source}$`), names };
}

const METHOD_NAMES = Object.keys(METHODS) as Method[];
// The `/{tenant}` forms first: a path both forms read (a tenant named `tasks`) is the tenant's.
const FORMS: readonly (readonly CompiledRoute[])[] = [METHOD_NAMES.map((m) => compile(m, true)), METHOD_NAMES.map((m) => compile(m, false))];

export type RestMatch =
  /** A route of the table: its method, the path's tenant (`undefined` in the form without one), its other parameters (decoded). */
  | { kind: "route"; method: Method; tenant: string | undefined; pathParams: Record<string, string> }
  /** A known path with another verb: the verbs it takes. */
  | { kind: "verb"; allow: string[] }
  | { kind: "none" };

/**
 * The route `verb path` names, `path` as sent (still percent-encoded) below
 * `/a2a/rest`. Parameters are decoded after matching, so an encoded `/` or
 * `:` stays inside its parameter; one that does not decode matches nothing.
 */
export function matchRestRoute(verb: string, path: string): RestMatch {
  for (const form of FORMS) {
    const allow = new Set<string>();
    for (const route of form) {
      const found = route.pattern.exec(path);
      if (!found) continue;
      if (!route.verbs.includes(verb)) {
        for (const v of route.verbs) allow.add(v);
        continue;
      }
      const params = decoded(route.names, found);
      if (!params) return { kind: "none" };
      const { tenant, ...pathParams } = params;
      return { kind: "route", method: route.method, tenant: route.tenanted ? tenant : undefined, pathParams };
    }
    if (allow.size > 0) return { kind: "verb", allow: [...allow] };
  }
  return { kind: "none" };
}

function decoded(names: readonly string[], found: RegExpExecArray): Record<string, string> | undefined {
  try {
    return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(found[index + 1]!)]));
  } catch {
    return undefined;
  }
}
