import { TRACEPARENT_HEADER, freshTraceparent } from "@dynamicagents/core/a2a";
import { readCapped } from "@dynamicagents/core/plugin";

/** Bytes of a page read at most; the rest is never pulled from the network. */
export const MAX_PAGE_BYTES = 1024 * 1024;
/** A page that has not arrived by then is not worth waiting for. */
const PAGE_TIMEOUT_MS = 20_000;

export type PageRead = { ok: true; url: string; text: string /** The page was longer than the byte cap. */; truncated: boolean } | { ok: false; error: string };

export interface ReadPageOptions {
  fetch?: typeof fetch;
  /** Stops the fetch and the read (the caller's turn was aborted). */
  signal?: AbortSignal;
  maxBytes?: number;
}

/**
 * Fetches one page (no redirects: the caller checked this origin, not the
 * next one) and returns its visible text. At most `maxBytes` of the body are
 * read; the rest is canceled, so a huge page costs no more than the cap.
 */
export async function readPage(target: URL, options: ReadPageOptions = {}): Promise<PageRead> {
  const maxBytes = options.maxBytes ?? MAX_PAGE_BYTES;
  // Our own timer, cleared when the read settles (an `AbortSignal.timeout`
  // would stay armed for its full period and keep the isolate busy).
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new DOMException("page read timed out", "TimeoutError")), PAGE_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  try {
    // A trace of its own: a caller's trace id never reaches a third party (docs/telemetry.md "Trace context").
    const headers = { Accept: "text/html, text/plain", [TRACEPARENT_HEADER]: freshTraceparent() };
    const response = await (options.fetch ?? fetch)(target, { redirect: "manual", headers, signal });
    if (!response.ok) {
      await response.body?.cancel();
      return { ok: false, error: `${target.href} answered HTTP ${response.status}` };
    }
    const { bytes, truncated } = await readCapped(response.body, maxBytes, signal);
    return { ok: true, url: target.href, text: pageText(new TextDecoder().decode(bytes)), truncated };
  } finally {
    clearTimeout(timer);
  }
}

/** Elements whose content is not text a reader sees. */
const RAW_TEXT_ELEMENTS = new Set(["script", "style"]);
const ENTITIES: Record<string, string> = { nbsp: " ", amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" };

/**
 * Visible text of an HTML page, roughly: scripts, styles and comments
 * dropped, tags removed, a few entities decoded, whitespace folded. A single
 * forward scan, so it is linear in the page: a regex such as `<[^>]+>`
 * backtracks over the rest of the page at every `<` that has no `>` after
 * it, which is quadratic (80 KB of `<` took seconds).
 */
export function pageText(html: string): string {
  const out: string[] = [];
  let i = 0;
  while (i < html.length) {
    const open = html.indexOf("<", i);
    if (open < 0) {
      out.push(html.slice(i));
      break;
    }
    out.push(html.slice(i, open));
    // Like a browser: `<` not followed by a tag-like character is text ("a < b").
    if (!/[A-Za-z/!?]/.test(html[open + 1] ?? "")) {
      out.push("<");
      i = open + 1;
      continue;
    }
    // Every search below either jumps past what it found or ends the scan,
    // so no character is searched over more than a couple of times.
    if (html.startsWith("!--", open + 1)) {
      const end = html.indexOf("-->", open + 4);
      if (end < 0) break;
      out.push(" ");
      i = end + 3;
      continue;
    }
    const close = html.indexOf(">", open + 1);
    // An unterminated tag runs to the end of the page: nothing after it is text.
    if (close < 0) break;
    out.push(" ");
    i = close + 1;
    const name = /^[A-Za-z][A-Za-z0-9-]*/.exec(html.slice(open + 1, Math.min(close, open + 16)))?.[0]?.toLowerCase();
    if (name && RAW_TEXT_ELEMENTS.has(name)) {
      const ending = new RegExp(`</${name}[\\s/>]`, "gi");
      ending.lastIndex = i;
      const found = ending.exec(html);
      if (!found) break;
      const after = html.indexOf(">", found.index);
      if (after < 0) break;
      i = after + 1;
    }
  }
  return out
    .join("")
    .replace(/&(nbsp|amp|lt|gt|quot|#39);/g, (_match, entity: string) => ENTITIES[entity]!)
    .replace(/\s+/g, " ")
    .trim();
}
