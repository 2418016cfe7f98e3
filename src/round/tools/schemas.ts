import { asSchema, type Tool, type ToolSet } from "ai";

/** ai's form of each input schema object, made once: its JSON Schema is computed at first use and kept. */
const converted = new WeakMap<object, ReturnType<typeof asSchema>>();

/**
 * The tools with each input schema in ai's form, built once per schema
 * object: handed a zod schema, ai converts it to JSON Schema on every
 * request, a measurable share of a turn (bench/README.md "Profiling"). A
 * schema a plugin defines once (at module level) is converted once per
 * isolate; one it builds per turn costs what it did.
 */
export function schemasOnce(tools: ToolSet): ToolSet {
  const out: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) {
    const schema: unknown = tool.inputSchema;
    if (typeof schema !== "object" || schema === null) {
      out[name] = tool;
      continue;
    }
    let once = converted.get(schema);
    if (!once) converted.set(schema, (once = asSchema(tool.inputSchema)));
    out[name] = { ...tool, inputSchema: once } satisfies Tool;
  }
  return out;
}
