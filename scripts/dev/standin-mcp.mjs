// The stand-in model's MCP tools (standin-model.mjs): any offered tool whose
// name holds `__` is a server's tool (core names them `<server>__<tool>`).
// The stand-in calls each once per user message, as it calls every plugin
// tool, so that every MCP tool an agent is given runs offline. Arguments come
// from the tool's JSON schema alone (no URL ever): the stand-in knows nothing
// of what the tool does. `smallNumber` and `fitLength` serve its schema
// filler for plugin tools too.

import { stringArgument } from "./standin-phrase.mjs";

/** Core's separator between a server's name and its tool's. */
const MCP_SEPARATOR = "__";
/** Characters of a result quoted in the answer. */
const QUOTED = 80;

/** @param {string} name */
export const isMcpTool = (name) => name.includes(MCP_SEPARATOR);

/**
 * Arguments valid for `schema` (an object's JSON Schema): its required
 * properties only; strings are the user's words, or for a parameter that
 * holds no text the likely phrase in them (standin-phrase.mjs), within
 * min/maxLength; numbers and integers the smallest valid value from 1 up (within
 * minimum/maximum, exclusive bounds and multipleOf), booleans false, enums
 * and consts their first value, arrays `minItems` items.
 * @param {Record<string, unknown> | undefined} schema
 * @param {string} userText
 * @returns {Record<string, unknown>}
 */
export function mcpArguments(schema, userText) {
  const value = synthesise(schema ?? { type: "object" }, userText || "(no text)", 0);
  return value && typeof value === "object" && !Array.isArray(value) ? /** @type {Record<string, unknown>} */ (value) : {};
}

/** @param {any} schema @param {string} words @param {number} depth @param {string} [name] the property's name */
function synthesise(schema, words, depth, name = "") {
  if (!schema || typeof schema !== "object" || depth > 8) return undefined;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const options = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(options) && options.length > 0) return synthesise(options.find((o) => o?.type !== "null") ?? options[0], words, depth + 1, name);
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return synthesise(Object.assign({}, ...schema.allOf), words, depth + 1, name);
  const type = Array.isArray(schema.type) ? (schema.type.find((t) => t !== "null") ?? "null") : (schema.type ?? (schema.properties ? "object" : "string"));
  switch (type) {
    case "object": {
      const properties = schema.properties ?? {};
      /** @type {Record<string, unknown>} */
      const out = {};
      for (const key of schema.required ?? []) out[key] = synthesise(properties[key] ?? {}, words, depth + 1, key) ?? "";
      return out;
    }
    case "array":
      return Array.from({ length: Math.max(0, Number(schema.minItems) || 0) }, () => synthesise(schema.items ?? {}, words, depth + 1, name));
    case "integer":
    case "number":
      return smallNumber(schema, type === "integer");
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return fitLength(stringArgument(name, words), schema.minLength, schema.maxLength);
  }
}

/** The smallest value from 1 up that the bounds allow; below 1 only when the maximum says so. */
export function smallNumber(schema, integer) {
  const step = typeof schema.multipleOf === "number" && schema.multipleOf > 0 ? schema.multipleOf : integer ? 1 : undefined;
  let low = 1;
  if (typeof schema.minimum === "number") low = Math.max(low, schema.minimum);
  if (typeof schema.exclusiveMinimum === "number") low = Math.max(low, schema.exclusiveMinimum + (step ?? 1e-6));
  if (step) low = Math.ceil(low / step) * step;
  let high = Number.POSITIVE_INFINITY;
  if (typeof schema.maximum === "number") high = schema.maximum;
  if (typeof schema.exclusiveMaximum === "number") high = Math.min(high, schema.exclusiveMaximum - (step ?? 1e-6));
  if (low <= high) return low;
  // Everything valid is below 1: the largest value allowed, on the step.
  return step ? Math.floor(high / step) * step : high;
}

/** The words, cut to `max` characters or repeated up to `min`. */
export function fitLength(words, min, max) {
  let text = words;
  if (typeof min === "number") while (text.length < min) text += ` ${words}`;
  return typeof max === "number" && text.length > max ? text.slice(0, Math.max(0, max)) : text;
}

/**
 * The sentence the answer gives to the MCP tools the turn used: each tool
 * and a short quote of what it returned (its text, not the JSON around it).
 * @param {{ name: string, output: string }[]} results
 */
export function mcpSentence(results) {
  const quoted = results.map(({ name, output }) => `${name} ("${shortQuote(output)}")`);
  const list = quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(", ")} and ${quoted.at(-1)}`;
  return `I used the MCP tool${results.length === 1 ? "" : "s"} ${list}.`;
}

/** A result's text: a JSON string's value, an MCP result's text blocks, else the raw output; one line, clipped. */
function shortQuote(output) {
  let text = output;
  try {
    const value = JSON.parse(output);
    if (typeof value === "string") text = value;
    else if (Array.isArray(value?.content)) text = value.content.map((block) => (typeof block?.text === "string" ? block.text : "")).join(" ");
  } catch {
    // words, as they came
  }
  const line = text.replace(/\s+/g, " ").trim() || "(nothing)";
  return line.length <= QUOTED ? line : `${line.slice(0, QUOTED - 1)}…`;
}
