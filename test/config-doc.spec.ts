import { describe, expect, it } from "vitest";
import readme from "../README.md?raw";
import { resolveConfig } from "@dynamicagents/core/agent";
import { ConfigError } from "@dynamicagents/core/errors";

// The README's "Configuration" table is the reference an author reads: it must list every field
// `resolveConfig` knows, with the default it fills in. A field added, removed or re-defaulted in
// src/agent/config.ts without the table fails here.

/** The table's rows: field path → its default column, as written. */
function tableRows(): Map<string, string> {
  const start = readme.indexOf("\n### Configuration\n");
  expect(start, 'README.md has no "### Configuration" section').toBeGreaterThan(-1);
  const section = readme.slice(start, readme.indexOf("\n### ", start + 1));
  const rows = [...section.matchAll(/^\| `([\w.]+)` \| ([^|]+) \|/gm)];
  return new Map(rows.map((m) => [m[1]!, m[2]!.trim()]));
}

/** A default as the table writes it (`"context"`, `[]`, `60,000`, none) as a value. */
function written(cell: string): unknown {
  if (cell === "none") return undefined;
  const text = cell.replace(/^`|`$/g, "");
  return /^[\d,]+$/.test(text) ? Number(text.replaceAll(",", "")) : JSON.parse(text);
}

/** Every leaf of the resolved config (arrays and records are leaves), by dotted path. */
function leaves(value: Record<string, unknown>, prefix = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, v] of Object.entries(value)) {
    const path = `${prefix}${key}`;
    const nested = v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0;
    if (nested) for (const [p, leaf] of leaves(v as Record<string, unknown>, `${path}.`)) out.set(p, leaf);
    else out.set(path, v);
  }
  return out;
}

describe("the README's configuration table", () => {
  const rows = tableRows();
  const defaults = leaves(resolveConfig({}) as unknown as Record<string, unknown>);

  it("lists every field with the default resolveConfig fills in", () => {
    expect(rows.size).toBeGreaterThan(30);
    for (const [path, value] of defaults) {
      expect(rows.has(path), `README "Configuration" lacks ${path}`).toBe(true);
      expect(written(rows.get(path)!), path).toEqual(value);
    }
  });

  it("lists only fields resolveConfig knows (the optional ones default to none)", () => {
    for (const [path, cell] of rows) {
      if (defaults.has(path)) continue;
      expect(cell, `${path} has no default, so the table must say none`).toBe("none");
      // An unknown key is refused as "Unrecognized"; a known optional one by its type.
      const [section, key] = path.split(".");
      let error: unknown;
      try {
        resolveConfig({ [section!]: { [key!]: Symbol("not a value") } } as never);
      } catch (e) {
        error = e;
      }
      expect(error, path).toBeInstanceOf(ConfigError);
      expect((error as Error).message, path).not.toMatch(/unrecognized/i);
    }
  });
});
