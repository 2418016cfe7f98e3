import type { EdgeEnv } from "./options.js";
import { createMiddleware } from "hono/factory";
import { RETAINED_304_HEADERS } from "hono/etag";

/** A response body with its strong validator, computed once and served many times. */
export interface CachedBody {
  body: string;
  etag: string;
}

/**
 * The validator is a hash of the body, so every isolate serving the same
 * card or JWKS names the same ETag; hono's `etag()` answers the conditional
 * GET from the header set here instead of hashing the body per request.
 */
export async function cachedBody(value: unknown): Promise<CachedBody> {
  const body = JSON.stringify(value);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)));
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { body, etag: `"${hex}"` };
}

export function cachedResponse(cached: CachedBody, maxAgeSeconds: number, lastModified: string): Response {
  return new Response(cached.body, {
    status: 200,
    headers: {
      ETag: cached.etag,
      "Last-Modified": lastModified,
      "Cache-Control": `public, max-age=${maxAgeSeconds}`,
      "Content-Type": "application/json",
    },
  });
}

/** What a 304 keeps of the 200 it stands for: hono's list, and the date it was validated against. */
export const RETAINED_ON_304: readonly string[] = [...RETAINED_304_HEADERS, "last-modified"];

const KID_DATE = /^a2a-(\d{4})-(\d{2})-(\d{2})-/;

/**
 * `Last-Modified` of the card and JWKS, read rather than clocked so every
 * isolate agrees: the version metadata binding's upload time (each deploy,
 * secret or setting change is a new version), else the UTC day in the key's
 * `kid` (`npm run keys`), else the epoch; never later than now (RFC 9110 §8.8.2.1).
 */
export function lastModifiedOf(env: Pick<EdgeEnv, "CF_VERSION_METADATA">, kid: string, now: number = Date.now()): string {
  const at = versionTimestamp(env) ?? kidDate(kid) ?? 0;
  return new Date(Math.min(at, now)).toUTCString();
}

function versionTimestamp(env: Pick<EdgeEnv, "CF_VERSION_METADATA">): number | undefined {
  const timestamp: unknown = env.CF_VERSION_METADATA?.timestamp;
  const at = typeof timestamp === "string" ? Date.parse(timestamp) : Number.NaN;
  return Number.isFinite(at) ? at : undefined;
}

function kidDate(kid: string): number | undefined {
  const match = KID_DATE.exec(kid);
  if (!match) return undefined;
  return validDate(Number(match[1]), Number(match[2]) - 1, Number(match[3]), "00", "00", "00");
}

/** Epoch ms of a UTC date, or `undefined` when a field is out of range (31 Feb). */
function validDate(year: number, month: number, day: number, hh: string, mm: string, ss: string): number | undefined {
  const [hours, minutes, seconds] = [Number(hh), Number(mm), Number(ss)];
  const at = new Date(Date.UTC(year, month, day, hours, minutes, seconds));
  const same =
    at.getUTCFullYear() === year &&
    at.getUTCMonth() === month &&
    at.getUTCDate() === day &&
    at.getUTCHours() === hours &&
    at.getUTCMinutes() === minutes &&
    at.getUTCSeconds() === seconds;
  return same ? at.getTime() : undefined;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const IMF_FIXDATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC850_DATE = /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const ASCTIME_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

/**
 * An HTTP-date (RFC 9110 §5.6.7) in any of its three forms, as epoch ms;
 * `undefined` for anything else, which a recipient must ignore (§13.1.3).
 */
function parseHttpDate(value: string | null | undefined, now: number = Date.now()): number | undefined {
  const text = (value ?? "").trim();
  const at = (year: number, monthName: string, day: string, hh: string, mm: string, ss: string) => {
    const month = MONTHS.indexOf(monthName);
    return month < 0 ? undefined : validDate(year, month, Number(day), hh, mm, ss);
  };
  const imf = IMF_FIXDATE.exec(text);
  if (imf) return at(Number(imf[3]), imf[2]!, imf[1]!, imf[4]!, imf[5]!, imf[6]!);
  const rfc850 = RFC850_DATE.exec(text);
  if (rfc850) {
    // A two-digit year more than 50 years ahead is the century before.
    const thisYear = new Date(now).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(rfc850[3]);
    if (year > thisYear + 50) year -= 100;
    return at(year, rfc850[2]!, rfc850[1]!, rfc850[4]!, rfc850[5]!, rfc850[6]!);
  }
  const asctime = ASCTIME_DATE.exec(text);
  if (asctime) return at(Number(asctime[6]), asctime[1]!, asctime[2]!.trim(), asctime[3]!, asctime[4]!, asctime[5]!);
  return undefined;
}

/**
 * `If-Modified-Since` → 304 for a 200 with `Last-Modified`. Registered before
 * hono's `etag()`, it steps aside when `If-None-Match` is sent (RFC 9110 §13.2.2).
 */
export const notModifiedSince = () =>
  createMiddleware(async (c, next) => {
    await next();
    if ((c.req.method !== "GET" && c.req.method !== "HEAD") || c.res.status !== 200) return;
    if (c.req.header("If-None-Match") !== undefined) return;
    const since = parseHttpDate(c.req.header("If-Modified-Since"));
    const modified = parseHttpDate(c.res.headers.get("Last-Modified"));
    if (since === undefined || modified === undefined || modified > since) return;
    await c.res.body?.cancel();
    // hono carries the 200's headers over to the new response; keep those a 304 may have.
    c.res = new Response(null, { status: 304, statusText: "Not Modified" });
    for (const name of [...c.res.headers.keys()]) if (!RETAINED_ON_304.includes(name.toLowerCase())) c.res.headers.delete(name);
  });
