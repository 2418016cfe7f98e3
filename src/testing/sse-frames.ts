/** One `data:` event of an SSE stream: its `id:` (if any) and its data lines joined. */
export interface SseFrame {
  id: string | undefined;
  data: string;
}

/**
 * The events of an SSE body as they arrive (the WHATWG event-stream format: blank line ends an event,
 * `:` starts a comment). Comments (heartbeats, the closing one) go to `onComment` without the colon.
 * One reader for every client here, so the JSON-RPC and HTTP+JSON bindings' streams are read alike.
 */
export function sseFrames(
  body: ReadableStream<Uint8Array>,
  onComment: (comment: string) => void,
): { frames: AsyncGenerator<SseFrame>; cancel(): Promise<void> } {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  async function* frames(): AsyncGenerator<SseFrame> {
    let buffer = "";
    let id: string | undefined;
    let data: string[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const line = buffer.slice(0, end).replace(/\r$/, "");
        buffer = buffer.slice(end + 1);
        if (line === "") {
          if (data.length) yield { id, data: data.join("\n") };
          [id, data] = [undefined, []];
        } else if (line.startsWith(":")) onComment(line.slice(1).replace(/^ /, ""));
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        else if (line.startsWith("id:")) id = line.slice(3).trim();
      }
    }
  }
  return { frames: frames(), cancel: () => reader.cancel().catch(() => {}) };
}
