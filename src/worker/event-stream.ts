import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { eventLine, readEventLine, type EventLines, type StreamEventJson } from "../boundary/index.js";

/** A method's answer that is a stream of events rather than one result (SendStreamingMessage, SubscribeToTask). */
export class EventStream {
  constructor(
    readonly lines: EventLines,
    /** Tells the object the client went away. */
    readonly release: () => Promise<unknown>,
  ) {}

  /** A stream of one event the edge already has (a message answer), numbered 0. */
  static single(event: StreamEventJson): EventStream {
    const line = new TextEncoder().encode(eventLine(0, JSON.stringify(event)));
    return new EventStream(new Blob([line]).stream(), async () => {});
  }
}

/** How long a stream may stay open, and how often it shows it is (docs/protocol.md "Events, streams and pushes"). */
export interface StreamTiming {
  heartbeatMs: number;
  maxLifetimeMs: number;
  /** The `exp` of the token the stream was opened with, in seconds. */
  tokenExp: number;
  /** The edge's clock, in milliseconds (the one the token's `exp` was checked against). */
  now: () => number;
}

const RESUME = "resume with a fresh token and Last-Event-ID";

/**
 * The object's event lines as SSE (docs/protocol.md "Events, streams and
 * pushes"): each event's `data:` the StreamResponse in the binding's frame
 * (`data`: a JSON-RPC response's `result`, or bare), its `id:` the event's `seq`. A comment every heartbeat: the
 * network tells a server its client is gone only when a write fails, and
 * that failure (hono's abort) releases the stream at the object, so an
 * abandoned stream frees its place within one heartbeat. At a heartbeat past
 * the token's `exp` or the stream's maximum lifetime, it ends with a comment
 * saying why, and is released too; so does a stream the object ends itself.
 */
export function sseResponse(
  c: Context,
  data: (eventJson: string) => string,
  stream: EventStream,
  timing: StreamTiming,
  waitUntil: (promise: Promise<unknown>) => void,
): Response {
  return streamSSE(c, async (sse) => {
    const reader = stream.lines.pipeThrough(new TextDecoderStream()).getReader();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      void reader.cancel().catch(() => {});
      // Said outright too: a cancel does not always cross the RPC boundary in time to free the caller's place.
      waitUntil(stream.release().catch(() => {}));
    };
    sse.onAbort(release);
    const ends = [
      { at: timing.tokenExp * 1000, why: `token expired; ${RESUME}` },
      { at: timing.now() + timing.maxLifetimeMs, why: `maximum stream lifetime (${Math.round(timing.maxLifetimeMs / 1000)} s) reached; ${RESUME}` },
    ].sort((a, b) => a.at - b.at);
    let closing: string | undefined;
    const heartbeat = setInterval(() => {
      const now = timing.now();
      const end = ends.find((e) => e.at <= now);
      if (!end) return void sse.write(": keepalive\n\n");
      clearInterval(heartbeat);
      closing = end.why;
      release();
    }, timing.heartbeatMs);
    try {
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
          const read = readEventLine(buffer.slice(0, end));
          buffer = buffer.slice(end + 1);
          // The object ended the stream itself (its task was erased): the last line says why.
          if ("closing" in read) {
            closing = read.closing;
            continue;
          }
          const { seq, eventJson } = read;
          await sse.writeSSE({ id: String(seq), data: data(eventJson) });
        }
      }
    } finally {
      clearInterval(heartbeat);
    }
    if (closing) await sse.write(`: closing: ${closing}\n\n`);
  });
}
