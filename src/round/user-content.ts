import type { FilePart, TextPart, UserContent } from "ai";
import type { AgentConfig } from "../agent/config.js";
import type { InboundFile, PartWords } from "../agent/policy.js";
import { acceptsMediaType, base64Bytes, base64Length, bytesBase64, essenceOf, textOf } from "../a2a/parts.js";
import type { PartJson } from "../boundary/index.js";
import { readCapped } from "../plugin/read-capped.js";

// The model's user message, built from every part of the message that opened
// the task (docs/protocol.md "SendMessage" → Parts): nothing is dropped.
// Text stays text, data is given as JSON, a text file as its text, a binary
// file as a file part when the model reads that type and it fits, and
// anything else as a heading in the agent's words saying what it is.

export interface UserContentOptions {
  parts: AgentConfig["parts"];
  words: PartWords;
  /** The turn's: a cancel stops the fetches. */
  signal?: AbortSignal;
}

/** A fetch that has not answered by then is given to the model as its URL. */
const FETCH_TIMEOUT_MS = 20_000;

type Fetched = { ok: true; bytes: Uint8Array; mediaType: string | undefined } | { ok: false; withheld: NonNullable<InboundFile["withheld"]>; bytes?: number };

/**
 * The user message's content. Only text parts: the text as one string, as
 * before there were other parts. Otherwise one content part per message
 * part, in order (a binary file given whole is a heading and a file part).
 */
export async function userContent(parts: readonly PartJson[], options: UserContentOptions): Promise<UserContent> {
  if (parts.every((p) => p.text !== undefined)) {
    return parts
      .map((p) => p.text)
      .join("")
      .trim();
  }
  const fetched = await fetchAll(parts, options);
  let budget = options.parts.maxInlineFileBytes;
  const content: Array<TextPart | FilePart> = [];
  const text = (value: string) => content.push({ type: "text", text: value });

  for (const [index, part] of parts.entries()) {
    if (part.text !== undefined) {
      if (part.text !== "") text(part.text);
      continue;
    }
    if (part.data !== undefined) {
      text(`${options.words.data({ mediaType: essenceOf(part.mediaType) ?? "application/json" })}\n${JSON.stringify(part.data)}`);
      continue;
    }
    const filename = part.filename || undefined;
    const facts = { ...(filename ? { filename } : {}), ...(part.url === undefined ? {} : { url: part.url }) };
    const declared = essenceOf(part.mediaType);
    let bytes: Uint8Array | undefined;
    let mediaType = declared ?? "application/octet-stream";
    if (part.raw !== undefined) {
      const size = base64Length(part.raw);
      if (size > budget) {
        text(options.words.file({ ...facts, mediaType, bytes: size, given: "none", withheld: "too-large" }));
        continue;
      }
      bytes = base64Bytes(part.raw);
    } else {
      const got = fetched.get(index);
      if (!got?.ok) {
        const withheld = got?.withheld ?? "not-allowlisted";
        text(`${options.words.file({ ...facts, mediaType, ...(got?.bytes ? { bytes: got.bytes } : {}), given: "url", withheld })}\n${part.url}`);
        continue;
      }
      bytes = got.bytes;
      mediaType = declared ?? got.mediaType ?? mediaType;
    }
    // Given as the URL when it came as one: the model has at least that.
    const fallback = part.url === undefined ? ("none" as const) : ("url" as const);
    const withhold = (withheld: NonNullable<InboundFile["withheld"]>) => {
      const heading = options.words.file({ ...facts, mediaType, bytes: bytes!.byteLength, given: fallback, withheld });
      text(fallback === "url" ? `${heading}\n${part.url}` : heading);
    };
    if (bytes.byteLength > budget) {
      withhold("too-large");
      continue;
    }
    if (mediaType.startsWith("text/")) {
      budget -= bytes.byteLength;
      text(`${options.words.file({ ...facts, mediaType, bytes: bytes.byteLength, given: "text" })}\n${textOf(bytes, part.mediaType)}`);
      continue;
    }
    if (!acceptsMediaType(options.parts.modelFileTypes, mediaType)) {
      withhold("unsupported-type");
      continue;
    }
    budget -= bytes.byteLength;
    text(options.words.file({ ...facts, mediaType, bytes: bytes.byteLength, given: "file" }));
    content.push({ type: "file", data: part.raw ?? bytesBase64(bytes), mediaType, ...(filename ? { filename } : {}) });
  }
  return content;
}

/**
 * The URL parts worth fetching, fetched at once: an http(s) URL on the
 * allowlist, up to the message's number of fetches. Keyed by part index;
 * a URL part not in the map was not fetched (not on the allowlist).
 */
async function fetchAll(parts: readonly PartJson[], options: UserContentOptions): Promise<Map<number, Fetched>> {
  const allowed = new Set(options.parts.fetchAllowlist);
  const results = new Map<number, Fetched>();
  const pending: Array<Promise<void>> = [];
  let fetches = 0;
  for (const [index, part] of parts.entries()) {
    if (part.url === undefined || part.raw !== undefined) continue;
    const target = URL.canParse(part.url) ? new URL(part.url) : undefined;
    if (!target || !/^https?:$/.test(target.protocol) || !allowed.has(target.origin)) continue;
    if (fetches >= options.parts.maxFetchesPerMessage) {
      results.set(index, { ok: false, withheld: "fetch-limit" });
      continue;
    }
    fetches++;
    pending.push(fetchCapped(target, options.parts.maxFetchBytes, part.mediaType, options.signal).then((got) => void results.set(index, got)));
  }
  await Promise.all(pending);
  return results;
}

/**
 * One GET, redirects not followed (the allowlist names this origin, not the
 * next one), at most `maxBytes` of the body read: a longer body is canceled
 * at the cap and not given. A failure is the model's to hear of, not the turn's.
 */
async function fetchCapped(target: URL, maxBytes: number, mediaType: string | undefined, turn: AbortSignal | undefined): Promise<Fetched> {
  // Our own timer, cleared when the read settles, so nothing stays armed after it.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new DOMException("file fetch timed out", "TimeoutError")), FETCH_TIMEOUT_MS);
  const signal = turn ? AbortSignal.any([turn, timeout.signal]) : timeout.signal;
  try {
    const response = await fetch(target, { redirect: "manual", headers: { Accept: essenceOf(mediaType) ?? "*/*" }, signal });
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel();
      return { ok: false, withheld: "fetch-failed" };
    }
    const declared = Number(response.headers.get("Content-Length"));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel();
      return { ok: false, withheld: "too-large", bytes: declared };
    }
    const { bytes, truncated } = await readCapped(response.body, maxBytes, signal);
    if (truncated) return { ok: false, withheld: "too-large" };
    return { ok: true, bytes, mediaType: essenceOf(response.headers.get("Content-Type") ?? undefined) };
  } catch (error) {
    // A cancel is the turn's business: the round sees its signal and stops.
    if (turn?.aborted) throw error;
    return { ok: false, withheld: "fetch-failed" };
  } finally {
    clearTimeout(timer);
  }
}
