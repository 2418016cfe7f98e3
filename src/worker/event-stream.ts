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

/**
 * The object's event lines as SSE (docs/protocol.md "Events, streams and
 * pushes"): each event's `data:` one JSON-RPC response whose `result` is the
 * StreamResponse, its `id:` the event's `seq`. A client that goes away
 * cancels the object's stream, which releases its subscription there.
 */
export function sseResponse(c: Context, rpcId: string | number | null, stream: EventStream, waitUntil: (promise: Promise<unknown>) => void): Response {
  const id = JSON.stringify(rpcId);
  return streamSSE(c, async (sse) => {
    const reader = stream.lines.pipeThrough(new TextDecoderStream()).getReader();
    sse.onAbort(() => {
      void reader.cancel().catch(() => {});
      // Said outright too: a cancel does not always cross the RPC boundary in time to free the caller's place.
      waitUntil(stream.release().catch(() => {}));
    });
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const { seq, eventJson } = readEventLine(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
        await sse.writeSSE({ id: String(seq), data: `{"jsonrpc":"2.0","id":${id},"result":${eventJson}}` });
      }
    }
  });
}
