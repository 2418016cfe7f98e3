import { newTrace, traceOfRequest, turnTrace } from "@dynamicagents/core/a2a";
import { describe, expect, it } from "vitest";
import { MAX_PAGE_BYTES, pageText, readPage } from "../reference/plugins/page-reader.js";
import { webFetchPlugin } from "../reference/plugins/web-fetch.js";

const ORIGIN = "https://pages.example";
const CHUNK = 64 * 1024;

/** A body that makes `total` bytes on demand and counts what was pulled from it. */
function countingBody(total: number, byte = 0x61) {
  const meter = { pulled: 0, canceled: false };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (meter.pulled >= total) return controller.close();
        const size = Math.min(CHUNK, total - meter.pulled);
        meter.pulled += size;
        controller.enqueue(new Uint8Array(size).fill(byte));
      },
      cancel() {
        meter.canceled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, meter };
}

/** A fetch answering 200 with `body`, recording the init it was called with. */
function fakeFetch(body: () => ReadableStream<Uint8Array> | string) {
  const seen: RequestInit[] = [];
  const fetch = (async (_input: unknown, init?: RequestInit) => {
    seen.push(init ?? {});
    return new Response(body());
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

const noArtifacts = (): never => {
  throw new Error("the page reader adds no artifacts");
};

const fetchPage = async (fetch: typeof globalThis.fetch, url: string, abortSignal?: AbortSignal) => {
  const { tools } = await webFetchPlugin({ allowlist: [ORIGIN], fetch }).toolFamilies!.web!({
    taskId: "t",
    contextId: "c",
    origin: "https://agents.test",
    emit: () => {},
    progress: () => {},
    trace: turnTrace(newTrace()),
    addArtifact: noArtifacts,
  });
  return (tools.fetch_page!.execute as (input: unknown, options: unknown) => Promise<any>)({ url }, { toolCallId: "c", messages: [], abortSignal });
};

describe("the reference page reader", () => {
  it("reads a page only up to the byte cap, and cancels the rest", async () => {
    const { body, meter } = countingBody(8 * MAX_PAGE_BYTES);
    const { fetch } = fakeFetch(() => body);
    const result = await fetchPage(fetch, `${ORIGIN}/huge`);
    expect(result).toMatchObject({ url: `${ORIGIN}/huge`, truncated: true });
    expect(result.text).toHaveLength(20_000);
    expect(meter.pulled).toBeGreaterThanOrEqual(MAX_PAGE_BYTES);
    expect(meter.pulled).toBeLessThanOrEqual(MAX_PAGE_BYTES + CHUNK);
    expect(meter.canceled).toBe(true);
  });

  it('fetches each page in a trace of its own, never the turn\'s (docs/telemetry.md "Trace context")', async () => {
    const { fetch, seen } = fakeFetch(() => "<p>hello</p>");
    const turn = turnTrace(newTrace());
    const { tools } = await webFetchPlugin({ allowlist: [ORIGIN], fetch }).toolFamilies!.web!({
      taskId: "t",
      contextId: "c",
      origin: "https://agents.test",
      emit: () => {},
      progress: () => {},
      trace: turn,
      addArtifact: noArtifacts,
    });
    const execute = tools.fetch_page!.execute as (input: unknown, options: unknown) => Promise<unknown>;
    for (const path of ["/one", "/two"]) await execute({ url: `${ORIGIN}${path}` }, { toolCallId: "c", messages: [] });
    const traces = seen.map((init) => traceOfRequest(new Headers(init.headers).get("traceparent"))?.traceId);
    expect(traces).toHaveLength(2);
    expect(traces.every((id) => id !== undefined && id !== turn.traceId)).toBe(true);
    expect(traces[0]).not.toBe(traces[1]);
  });

  it("reads a page under the cap whole", async () => {
    const { body, meter } = countingBody(3 * CHUNK);
    const { fetch } = fakeFetch(() => body);
    const page = await readPage(new URL(`${ORIGIN}/small`), { fetch });
    expect(page).toMatchObject({ ok: true, truncated: false });
    expect(page.ok && page.text).toHaveLength(3 * CHUNK);
    expect(meter.canceled).toBe(false);
  });

  it("strips a 1 MB page of `<` in linear time and keeps it as text", async () => {
    // `<[^>]+>` backtracks to the end of the page at every `<`: on this page it would not finish.
    const { fetch } = fakeFetch(() => "<".repeat(1_000_000));
    const result = await fetchPage(fetch, `${ORIGIN}/angles`);
    expect(result).toMatchObject({ truncated: true });
    expect(result.text).toBe("<".repeat(20_000));
  });

  it("handles tag-heavy pages without a closing `>`, script or comment end", () => {
    expect(pageText(`<p>kept</p>${"<a".repeat(500_000)}`)).toBe("kept");
    expect(pageText(`<p>kept</p><script>${"<script>".repeat(100_000)}`)).toBe("kept");
    expect(pageText(`<p>kept</p><!--${"<!--".repeat(100_000)}`)).toBe("kept");
  });

  it("keeps the visible text: tags, scripts, styles and comments out, entities in, whitespace folded", () => {
    const html = `<html><head><style>p { color: red }</style><SCRIPT type="x">if (a < b) alert("<p>")</SCRIPT></head>
      <body><p>Fish &amp; chips&nbsp;cost &lt;5&gt; &quot;coins&quot;</p><!-- hidden <b>note</b> --><p>a < b and c > d</p></body></html>`;
    expect(pageText(html)).toBe(`Fish & chips cost <5> "coins" a < b and c > d`);
  });

  it("passes the abort signal: an abort stops the fetch and the read", async () => {
    const meter = { pulled: 0, canceled: false, stalled: false };
    const stalled = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // One chunk, then nothing ever again (a server that stopped sending).
        if (meter.pulled === 0) {
          meter.pulled = CHUNK;
          controller.enqueue(new Uint8Array(CHUNK).fill(0x61));
          return;
        }
        meter.stalled = true;
        await new Promise(() => undefined);
      },
      cancel() {
        meter.canceled = true;
      },
    });
    const { fetch, seen } = fakeFetch(() => stalled);
    const controller = new AbortController();
    const reading = fetchPage(fetch, `${ORIGIN}/stalled`, controller.signal);
    // Abort once the read is under way: the first chunk taken, the reader waiting for more.
    while (!meter.stalled) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.signal?.aborted).toBe(false);
    controller.abort(new DOMException("the turn was canceled", "AbortError"));
    await expect(reading).rejects.toThrow(/the turn was canceled/);
    expect(seen[0]!.signal?.aborted).toBe(true);
    expect(meter.canceled).toBe(true);
  });

  it("cancels the body when the abort lands between the answer and the read", async () => {
    const { body, meter } = countingBody(4 * CHUNK);
    const controller = new AbortController();
    const { fetch } = fakeFetch(() => {
      controller.abort(new DOMException("canceled as the page arrived", "AbortError"));
      return body;
    });
    await expect(fetchPage(fetch, `${ORIGIN}/late`, controller.signal)).rejects.toThrow(/canceled as the page arrived/);
    expect(meter.canceled).toBe(true);
  });
});
