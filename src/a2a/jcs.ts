/**
 * RFC 8785 (JCS) serialization. ECMAScript's `JSON.stringify` already emits
 * numbers (§3.2.2.3) and strings (§3.2.2.2) exactly as JCS requires, and the
 * default `Array.prototype.sort` orders keys by UTF-16 code units (§3.2.3), so
 * canonical JSON is a recursive key sort away.
 */
export function jcs(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) {
      throw new TypeError("JCS cannot represent NaN or Infinity");
    }
    const json = JSON.stringify(value);
    if (json === undefined) throw new TypeError(`JCS cannot represent a ${typeof value}`);
    return json;
  }
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${jcs((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(",")}}`;
}
