import type { Fetcher } from "./rpc.js";

/**
 * A Worker reached as over the network: a client that hangs up is not heard
 * of by the Worker until it next writes, when that write fails and cancels
 * its response body. Calling the handler in-process would pass the client's
 * cancel straight through, and hide what a real disconnect looks like
 * (docs/protocol.md "Events, streams and pushes": the heartbeat).
 */
export function overTheNetwork(worker: Fetcher): Fetcher {
  return async (request) => {
    const response = await worker(request);
    if (!response.body) return response;
    const server = response.body.getReader();
    let gone = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await server.read();
        // The chunk that left the server after the client did: its write fails.
        if (gone) return void server.cancel().catch(() => {});
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel() {
        gone = true;
        void server.read().then(
          () => server.cancel(),
          () => {},
        );
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}
