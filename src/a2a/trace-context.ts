// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent`
// and `tracestate` headers a turn is followed by (docs/telemetry.md "Trace
// context"). This module imports nothing, so the Node tooling (the dev
// gatekeeper) loads it directly, as it does wire.ts.

export const TRACEPARENT_HEADER = "traceparent";
export const TRACESTATE_HEADER = "tracestate";
/** A task's metadata key for the id of the trace its turn belongs to. */
export const TRACE_KEY = "https://dynamicagents.dev/trace";

/**
 * A turn's trace: its id, the caller's span it continues (when a request
 * brought one), its flags (only the sampled bit is kept), and the caller's
 * `tracestate`, which only ever goes back to the caller's gatekeeper.
 */
export interface TraceContext {
  traceId: string;
  /** The span of the request that started the turn, as its `traceparent` named it; absent for a trace started here. */
  parentId?: string;
  /** Two lowercase hex digits: `01` sampled, `00` not. */
  flags: string;
  state?: string;
}

const ZEROS = /^0+$/;
const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** A later version: the same first four fields, then (only) more after a dash. */
const LATER_VERSION = /^(?!ff)[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const MAX_STATE_MEMBERS = 32;
/** Vendors propagate at least 512 characters of `tracestate`; past that, whole members go, the longest (over 128) first. */
const MAX_STATE_CHARS = 512;
const LONG_MEMBER = 128;
const STATE_KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const STATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The trace a request continues: its `traceparent` read as W3C Trace Context
 * says (version `00` exactly, a later version by its first four fields; ids of
 * lowercase hex, not all zeros), with its `tracestate` when that is well formed
 * too. A malformed `traceparent` is ignored, never an error: `undefined`.
 */
export function traceOfRequest(traceparent: string | null | undefined, tracestate?: string | null): TraceContext | undefined {
  const value = traceparent?.trim() ?? "";
  const match = value.startsWith("00-") ? VERSION_00.exec(value) : LATER_VERSION.exec(value);
  if (!match) return undefined;
  const [, traceId = "", parentId = "", flags = "00"] = match;
  if (ZEROS.test(traceId) || ZEROS.test(parentId)) return undefined;
  const state = boundedState(tracestate);
  return { traceId, parentId, flags: sampledOnly(flags), ...(state ? { state } : {}) };
}

/** A trace as the parts of a turn join it: its id, and a `traceparent` naming a new span of it for each outbound request. */
export interface TurnTrace {
  readonly traceId: string;
  traceparent(): string;
}

/** `trace` for the parts of a turn to join (its `tracestate` stays behind: only the caller's gatekeeper gets it). */
export const turnTrace = (trace: Pick<TraceContext, "traceId" | "flags">): TurnTrace => ({
  traceId: trace.traceId,
  traceparent: () => childTraceparent(trace),
});

/** A trace started here (no request brought one), sampled: the platform's events record every turn. */
export function newTrace(): TraceContext {
  return { traceId: randomHex(16), flags: "01" };
}

/** A `traceparent` naming a new span of `trace`: one per outbound request. */
export function childTraceparent(trace: Pick<TraceContext, "traceId" | "flags">): string {
  return `00-${trace.traceId}-${randomHex(8)}-${trace.flags}`;
}

/** A `traceparent` of a trace of its own: for a request to a third party, which must never learn a caller's trace id. */
export const freshTraceparent = (): string => childTraceparent(newTrace());

/** `tracestate` kept opaque but bounded: every member well formed (else none is kept), at most 32, at most 512 characters. */
function boundedState(header: string | null | undefined): string | undefined {
  const members = (header ?? "")
    .split(",")
    .map((m) => m.trim())
    .filter(Boolean);
  if (members.length === 0 || members.length > MAX_STATE_MEMBERS) return undefined;
  for (const member of members) {
    const eq = member.indexOf("=");
    if (eq < 1 || !STATE_KEY.test(member.slice(0, eq)) || !STATE_VALUE.test(member.slice(eq + 1))) return undefined;
  }
  let kept = members;
  const size = () => kept.join(",").length;
  if (size() > MAX_STATE_CHARS) kept = kept.filter((m) => m.length <= LONG_MEMBER);
  while (kept.length > 0 && size() > MAX_STATE_CHARS) kept = kept.slice(0, -1);
  return kept.length ? kept.join(",") : undefined;
}

/** Version 00 defines one flag, sampled: nothing else is passed on. */
const sampledOnly = (flags: string): string => ((Number.parseInt(flags, 16) & 1) === 1 ? "01" : "00");

/** `bytes` random bytes as lowercase hex, never all zeros (an invalid id). */
function randomHex(bytes: number): string {
  for (;;) {
    const hex = [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
    if (!ZEROS.test(hex)) return hex;
  }
}
