/** Shapes of API keys and tokens that pages (and errors quoting them) leak most often. */
const CREDENTIAL = /\b(sk|pk|ghp|xox[abp])[-_][A-Za-z0-9_-]{16,}\b/g;

/**
 * Every string inside `value` (objects and arrays walked) with credential-
 * shaped substrings replaced. For an `onToolResult` redactor: the model never
 * needs a credential a page happened to quote.
 */
export function scrubCredentials(value: unknown): unknown {
  if (typeof value === "string") return value.replace(CREDENTIAL, "[redacted credential]");
  if (Array.isArray(value)) return value.map(scrubCredentials);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, scrubCredentials(inner)]));
  }
  return value;
}
