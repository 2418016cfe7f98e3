/** How a tool result is bounded: its size as serialized JSON, and the agent's words for one that was cut. */
export interface ResultCap {
  /** UTF-8 bytes of the result's JSON at most (`tools.maxResultBytes`). */
  maxBytes: number;
  /** Told to the model beside a cut result (the policy's `messages.toolResultCut`). */
  note: string;
}

/**
 * How much more than the cap the redactors see: a secret straddling the final
 * cut is then whole in what they read, and the one the first cut may split
 * lies past the final cut unless the redactors shrank what precedes it to
 * under a quarter.
 */
export const REDACTOR_VIEW_FACTOR = 4;

/**
 * The beginning of `value` as its JSON would hold it (plain data: `toJSON`
 * applied, what JSON leaves out left out), at most `maxBytes` of UTF-8 when
 * serialized: members and elements in order until the budget is spent, the
 * one it runs out in cut (a string to a prefix, never inside a surrogate
 * pair); `cut` says whether anything was left out. Bounded work whatever the
 * input's size, cycles included (every member costs bytes).
 */
export function clipJson(value: unknown, maxBytes: number): { value: unknown; cut: boolean } {
  const state = { left: maxBytes, cut: false };
  const clipped = walk(value, "", state);
  return { value: clipped === OMIT ? undefined : clipped, cut: state.cut };
}

/**
 * A (redacted) result as the model and the journal get it: as it is when it
 * fits in `cap.maxBytes` and nothing was cut before, otherwise
 * `{ truncated: true, note, result }` with as much of its beginning as fits,
 * the whole at most `cap.maxBytes` serialized.
 */
export function capResult(value: unknown, cap: ResultCap, cutBefore: boolean): unknown {
  if (!cutBefore && fits(value, cap.maxBytes)) return value;
  const shell = { truncated: true, note: cap.note };
  // The budget is exact for strings and structure; it shrinks again only if a number's form surprised it.
  let budget = cap.maxBytes - jsonBytes({ ...shell, result: null });
  for (;;) {
    const result = budget > 0 ? clipJson(value, budget).value : undefined;
    const wrapped = result === undefined ? shell : { ...shell, result };
    const over = jsonBytes(wrapped) - cap.maxBytes;
    if (over <= 0 || result === undefined) return wrapped;
    budget -= Math.max(over, Math.ceil(budget / 8));
  }
}

/** A text cut to at most `maxBytes` of UTF-8 (never inside a surrogate pair). */
export function clipText(text: string, maxBytes: number): string {
  return text.slice(0, measure(text, maxBytes, false).units);
}

/** Whether a value's JSON fits; a redactor's answer JSON cannot write (a cycle, a bigint) does not, and is clipped to plain data. */
function fits(value: unknown, maxBytes: number): boolean {
  try {
    return jsonBytes(value) <= maxBytes;
  } catch {
    return false;
  }
}

/** UTF-8 bytes of a value's JSON (`null` for what JSON leaves out). */
const jsonBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value ?? null) ?? "null").byteLength;

const OMIT = Symbol("omit");

function walk(input: unknown, key: string, state: { left: number; cut: boolean }): unknown {
  let value = input;
  if (typeof value === "object" && value !== null && "toJSON" in value && typeof value.toJSON === "function") value = value.toJSON(key);
  if (typeof value === "string") return clipString(value, state);
  // JSON has no bigint: its digits, as a string, rather than a throw later.
  if (typeof value === "bigint") return clipString(String(value), state);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return spend(JSON.stringify(value).length, state) ? value : OMIT;
  if (typeof value !== "object") return OMIT;
  if (!spend(2, state)) return OMIT;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      if (i > 0 && !spend(1, state)) break;
      const item = walk(value[i], String(i), state);
      if (item === OMIT) {
        if (state.cut) break;
        // JSON writes what it cannot hold in an array as null.
        if (!spend(4, state)) break;
        out.push(null);
      } else out.push(item);
      if (state.cut) break;
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  let first = true;
  for (const name of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[name];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    // The name, its quotes and colon, and the comma before it.
    if (!spend(measure(name, Infinity, true).bytes + 3 + (first ? 0 : 1), state)) break;
    const item = walk(member, name, state);
    if (item !== OMIT) out[name] = item;
    first = false;
    if (state.cut) break;
  }
  return out;
}

/** Takes `bytes` from the budget, or marks the value cut when they do not fit. */
function spend(bytes: number, state: { left: number; cut: boolean }): boolean {
  if (bytes > state.left) {
    state.cut = true;
    state.left = 0;
    return false;
  }
  state.left -= bytes;
  return true;
}

function clipString(text: string, state: { left: number; cut: boolean }): unknown {
  if (!spend(2, state)) return OMIT;
  const { units, bytes } = measure(text, state.left, true);
  state.left -= bytes;
  if (units === text.length) return text;
  state.cut = true;
  state.left = 0;
  return text.slice(0, units);
}

/**
 * How many UTF-16 units of `text` fit in `maxBytes`, and their bytes: UTF-8,
 * or (`quoted`) as they are written inside a JSON string, escapes included.
 */
function measure(text: string, maxBytes: number, quoted: boolean): { units: number; bytes: number } {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    let units = 1;
    let size: number;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      units = 2;
      size = 4;
    } else if (c >= 0xd800 && c <= 0xdfff) size = quoted ? 6 : 3;
    else if (!quoted) size = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    else if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) size = 2;
    else if (c < 0x20) size = 6;
    else size = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += units;
  }
  return { units: i, bytes };
}
