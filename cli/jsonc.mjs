// Reads JSON with comments (wrangler.jsonc) into nodes that keep their
// offsets, so the generator can add an entry to an array and leave every
// comment, line and trailing comma of the file as it was.

/**
 * @typedef {{ type: "object", start: number, end: number, members: Array<{ key: string, value: JsoncNode }> }
 *   | { type: "array", start: number, end: number, items: JsoncNode[] }
 *   | { type: "scalar", start: number, end: number, value: unknown }} JsoncNode
 */

/** @param {string} text @param {string} file for messages @returns {JsoncNode} */
export function parseJsonc(text, file = "wrangler.jsonc") {
  let i = 0;
  /** @type {(what: string) => never} (typed, so that TypeScript narrows after a call) */
  const fail = (what) => {
    throw new Error(`${file}: ${what} on line ${text.slice(0, i).split("\n").length}`);
  };
  const skip = () => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i])) i++;
      if (text.startsWith("//", i)) i = text.includes("\n", i) ? text.indexOf("\n", i) : text.length;
      else if (text.startsWith("/*", i)) i = text.includes("*/", i + 2) ? text.indexOf("*/", i + 2) + 2 : fail("a comment is never closed");
      else return;
    }
  };
  /** Reads `open` … `close` with `entry()` for each element, allowing a trailing comma. */
  const list = (close, entry) => {
    i++;
    const out = [];
    for (;;) {
      skip();
      if (text[i] === close) return (i++, out);
      out.push(entry());
      skip();
      if (text[i] === ",") i++;
      else if (text[i] !== close) fail(`expected "," or "${close}"`);
    }
  };
  /** @returns {JsoncNode} */
  const value = () => {
    skip();
    const start = i;
    if (text[i] === "{") {
      const members = list("}", () => {
        const key = value();
        if (key.type !== "scalar" || typeof key.value !== "string") fail("expected a property name");
        skip();
        if (text[i] !== ":") fail('expected ":"');
        i++;
        return { key: /** @type {string} */ (key.value), value: value() };
      });
      return { type: "object", start, end: i, members };
    }
    if (text[i] === "[") {
      const items = list("]", value);
      return { type: "array", start, end: i, items };
    }
    if (text[i] === '"') {
      for (i++; i < text.length && text[i] !== '"'; i += text[i] === "\\" ? 2 : 1);
      if (i >= text.length) fail("a string is never closed");
      i++;
      return { type: "scalar", start, end: i, value: JSON.parse(text.slice(start, i)) };
    }
    const literal = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i));
    if (!literal) fail("unexpected text");
    i += literal[0].length;
    return { type: "scalar", start, end: i, value: JSON.parse(literal[0]) };
  };
  const root = value();
  skip();
  if (i !== text.length) fail("unexpected text after the end");
  return root;
}

/** The plain value of a node. @param {JsoncNode} node @returns {any} */
export const plain = (node) =>
  node.type === "object" ? Object.fromEntries(node.members.map((m) => [m.key, plain(m.value)])) : node.type === "array" ? node.items.map(plain) : node.value;

/** The node at `path` (property names), or undefined. @param {JsoncNode | undefined} node @param {string[]} path */
const nodeAt = (node, path) => path.reduce((at, key) => (at?.type === "object" ? at.members.find((m) => m.key === key)?.value : undefined), node);

/**
 * `text` with `item` (JSON text) added at the end of the array at `path`, one
 * element per line as the array already has them (an empty one becomes so).
 * @param {string} text @param {string[]} path @param {string} item
 */
export function appendToArray(text, path, item) {
  const array = nodeAt(parseJsonc(text), path);
  if (array?.type !== "array") throw new Error(`wrangler.jsonc: no array at ${path.join(".")}`);
  const lineIndent = (offset) => /^[ \t]*/.exec(text.slice(text.lastIndexOf("\n", offset - 1) + 1))?.[0] ?? "";
  const last = array.items.at(-1);
  if (!last) {
    const indent = lineIndent(array.start);
    return `${text.slice(0, array.start)}[\n${indent}  ${item}\n${indent}]${text.slice(array.end)}`;
  }
  const multiline = text.slice(array.start, array.items[0].start).includes("\n");
  return `${text.slice(0, last.end)}${multiline ? `,\n${lineIndent(last.start)}` : ", "}${item}${text.slice(last.end)}`;
}
