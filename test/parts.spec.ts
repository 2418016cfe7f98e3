import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it } from "vitest";
import { ACCEPTED_OUTPUT_MODES_KEY, acceptsMediaType } from "../src/a2a/parts.js";
import { PNG_BASE64, artifactTools, mark } from "./support/agents.js";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { isolatedEdge, markerEdge } from "./support/isolated-edge.js";
import { chatCompletion, chatToolCall, chatToolCalls, eventually, type ModelCall } from "./support/outbound.js";
import { call, drain, openStream } from "./support/rpc.js";
import { useMarkerHarness, useTurnHarness } from "./support/turn-harness.js";

// Parts beyond text, in and out (docs/protocol.md "SendMessage" → Parts and
// acceptedOutputModes): every part of the opening message reaches the model,
// a file URL is fetched only from the agent's allowlist and within its byte
// cap, a card that does not take a media type refuses it at the edge, tools
// add data and file artifacts, and a client's acceptedOutputModes shape them.

const b64 = (text: string) => btoa(text);
const message = (parts: unknown[], extra: Record<string, unknown> = {}) => ({ messageId: crypto.randomUUID(), role: "ROLE_USER", parts, ...extra });

/** The user message the model was given (the conversation is new, so it is the first). */
const userContentOf = (c: ModelCall) => c.messages.find((m) => m.role === "user")?.content as Array<Record<string, any>> | string;
/** The facts a marker's words were handed: the JSON after the marker, up to the end of its line. */
const factsOf = (text: string, marker: string) => {
  expect(text.startsWith(marker)).toBe(true);
  return JSON.parse(text.slice(marker.length).split("\n", 1)[0]!);
};
const toolMessages = (c: ModelCall) => c.messages.filter((m) => m.role === "tool");

describe("the specs' marker agent", () => {
  const harness = useMarkerHarness();
  const edge = markerEdge();
  const newCaller = () => {
    const key = `caller-${crypto.randomUUID()}`;
    return {
      mint: { tenant: "marker", identity: { key } },
      stub: env.MARKER_AGENT!.get(env.MARKER_AGENT!.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "marker", key }))),
    };
  };
  type Caller = ReturnType<typeof newCaller>;
  const rpc = (method: string, params: Record<string, unknown>, who: Caller) => call(method, params, { worker: edge.fetch, mint: who.mint });
  const fetchesOf = (prefix: string) => harness.outbound.requests.filter((r) => r.url.startsWith(prefix));

  describe("parts in", () => {
    it("gives the model every part: text, data as JSON, a text file's text, a binary file as a file part, an allowlisted URL's text, any other URL as the URL", async () => {
      harness.outbound.pages.set(
        "https://files.test/notes.txt",
        () => new Response("fetched from the allowlist", { headers: { "Content-Type": "text/plain" } }),
      );
      harness.outbound.model = (c) => chatCompletion("seen", c.model);
      const who = newCaller();
      const reply = await rpc(
        "SendMessage",
        {
          message: message([
            { text: "Look at these." },
            { data: { city: "Oslo", days: 3 } },
            { raw: b64("hello from a file"), mediaType: "text/markdown; charset=utf-8", filename: "hello.md" },
            { raw: PNG_BASE64, mediaType: "image/png", filename: "dot.png" },
            { url: "https://files.test/notes.txt", mediaType: "text/plain", filename: "notes.txt" },
            { url: "https://elsewhere.test/secret.txt", mediaType: "text/plain" },
          ]),
        },
        who,
      );
      expect(reply.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
      const content = userContentOf(harness.outbound.modelCalls[0]!) as Array<Record<string, any>>;
      // OpenAI chat format, as @ai-sdk/openai-compatible writes it: one content part per message part (a file given whole is two).
      expect(content.map((p) => p.type)).toEqual(["text", "text", "text", "text", "image_url", "text", "text"]);
      expect(content[0]!.text).toBe("Look at these.");
      expect(factsOf(content[1]!.text, mark("data"))).toEqual({ mediaType: "application/json" });
      expect(content[1]!.text.split("\n")[1]).toBe('{"city":"Oslo","days":3}');
      expect(factsOf(content[2]!.text, mark("file"))).toEqual({ filename: "hello.md", mediaType: "text/markdown", bytes: 17, given: "text" });
      expect(content[2]!.text.split("\n")[1]).toBe("hello from a file");
      expect(factsOf(content[3]!.text, mark("file"))).toMatchObject({ filename: "dot.png", mediaType: "image/png", given: "file" });
      expect(content[4]!.image_url.url).toBe(`data:image/png;base64,${PNG_BASE64}`);
      expect(factsOf(content[5]!.text, mark("file"))).toMatchObject({ url: "https://files.test/notes.txt", given: "text", bytes: 26 });
      expect(content[5]!.text.split("\n")[1]).toBe("fetched from the allowlist");
      expect(factsOf(content[6]!.text, mark("file"))).toMatchObject({ url: "https://elsewhere.test/secret.txt", given: "url", withheld: "not-allowlisted" });
      expect(content[6]!.text.split("\n")[1]).toBe("https://elsewhere.test/secret.txt");
      // Fetched once, from the allowlist only.
      expect(fetchesOf("https://files.test/")).toHaveLength(1);
      expect(fetchesOf("https://elsewhere.test/")).toHaveLength(0);
      // The task keeps the message as sent.
      expect(reply.body.result.task.history[0].parts).toHaveLength(6);
    });

    it("a message of text parts only reaches the model as one string, as it always did", async () => {
      harness.outbound.model = (c) => chatCompletion("ok", c.model);
      await rpc("SendMessage", { message: message([{ text: "one " }, { text: "two" }]) }, newCaller());
      expect(userContentOf(harness.outbound.modelCalls[0]!)).toBe("one two");
    });

    it("reads a URL only up to the byte cap: a longer body is cut off unread and the model gets the URL", async () => {
      let pulled = 0;
      // Endless: only a bounded read ever finishes this turn.
      harness.outbound.pages.set(
        "https://files.test/endless.txt",
        () =>
          new Response(
            new ReadableStream<Uint8Array>({
              pull(controller) {
                pulled++;
                controller.enqueue(new TextEncoder().encode("0123456789abcdef"));
              },
            }),
            { headers: { "Content-Type": "text/plain" } },
          ),
      );
      harness.outbound.pages.set("https://files.test/declared.txt", () => new Response("x".repeat(100), { headers: { "Content-Length": "100" } }));
      harness.outbound.model = (c) => chatCompletion("too big", c.model);
      const reply = await rpc(
        "SendMessage",
        {
          message: message([
            { url: "https://files.test/endless.txt", mediaType: "text/plain" },
            { url: "https://files.test/declared.txt", mediaType: "text/plain" },
          ]),
        },
        newCaller(),
      );
      expect(reply.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
      const content = userContentOf(harness.outbound.modelCalls[0]!) as Array<Record<string, any>>;
      expect(factsOf(content[0]!.text, mark("file"))).toMatchObject({ url: "https://files.test/endless.txt", given: "url", withheld: "too-large" });
      expect(content[0]!.text.split("\n")[1]).toBe("https://files.test/endless.txt");
      // The cap is 64 bytes (test/support/agents.ts): four chunks of 16 reach it, the fifth passes it, and then reading stops.
      expect(pulled).toBeLessThanOrEqual(8);
      expect(factsOf(content[1]!.text, mark("file"))).toMatchObject({
        url: "https://files.test/declared.txt",
        given: "url",
        withheld: "too-large",
        bytes: 100,
      });
    });

    it("describes a binary file the model does not read, and one past the inline budget, instead of dropping it", async () => {
      harness.outbound.model = (c) => chatCompletion("described", c.model);
      const big = btoa("\u0000".repeat(2048));
      await rpc(
        "SendMessage",
        {
          message: message([
            { raw: big, mediaType: "image/png", filename: "big.png" },
            { raw: b64("%PDF-1.7"), mediaType: "application/pdf", filename: "doc.pdf" },
          ]),
        },
        newCaller(),
      );
      const content = userContentOf(harness.outbound.modelCalls[0]!) as Array<Record<string, any>>;
      expect(content).toHaveLength(2);
      expect(factsOf(content[0]!.text, mark("file"))).toEqual({
        filename: "big.png",
        mediaType: "image/png",
        bytes: 2048,
        given: "none",
        withheld: "too-large",
      });
      expect(factsOf(content[1]!.text, mark("file"))).toEqual({
        filename: "doc.pdf",
        mediaType: "application/pdf",
        bytes: 8,
        given: "none",
        withheld: "unsupported-type",
      });
    });

    it("fetches a file once per task: the round that resumes after a question reads the stored message", async () => {
      harness.outbound.pages.set("https://files.test/once.txt", () => new Response("the one copy", { headers: { "Content-Type": "text/plain" } }));
      harness.outbound.model = (c) =>
        toolMessages(c).length === 0 ? chatToolCall("ask_user", { question: "Which part?" }, c.model) : chatCompletion("answered", c.model);
      const who = newCaller();
      const asked = await rpc(
        "SendMessage",
        { message: message([{ text: "read this" }, { url: "https://files.test/once.txt", mediaType: "text/plain" }]) },
        who,
      );
      const task = asked.body.result.task;
      expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
      const done = await rpc("SendMessage", { message: message([{ text: "the first" }], { taskId: task.id, contextId: task.contextId }) }, who);
      expect(done.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
      expect(harness.outbound.modelCalls).toHaveLength(2);
      expect(fetchesOf("https://files.test/once.txt")).toHaveLength(1);
      // The resumed round's model still reads the file's text.
      expect(JSON.stringify(userContentOf(harness.outbound.modelCalls[1]!))).toContain("the one copy");
    });
  });

  describe("artifacts out", () => {
    const makeBoth = (c: ModelCall) =>
      toolMessages(c).length === 0
        ? chatToolCalls(
            [
              { name: "make_data", args: { n: 3 } },
              { name: "make_file", args: { kind: "png" } },
            ],
            c.model,
          )
        : chatCompletion("made them", c.model);
    const named = (artifacts: Array<{ name?: string }>, name: string) => artifacts.filter((a) => a.name === name);

    it("a tool's data and file artifacts are in the finished task after the answer, in SendMessage's reply and in GetTask", async () => {
      harness.outbound.model = makeBoth;
      const who = newCaller();
      const task = (await rpc("SendMessage", { message: message([{ text: "make them" }]) }, who)).body.result.task;
      expect(task.status.state).toBe("TASK_STATE_COMPLETED");
      expect(task.artifacts[0]).toMatchObject({ artifactId: "answer", parts: [{ text: "made them" }] });
      expect(task.artifacts).toHaveLength(3);
      expect(named(task.artifacts, "figures")).toEqual([
        { artifactId: expect.any(String), name: "figures", description: mark("figures"), parts: [{ data: { n: 3, squared: 9 } }] },
      ]);
      expect(named(task.artifacts, "chart")).toEqual([
        { artifactId: expect.any(String), name: "chart", parts: [{ raw: PNG_BASE64, mediaType: "image/png", filename: "dot.png" }] },
      ]);
      const got = await rpc("GetTask", { id: task.id }, who);
      expect(got.body.result.artifacts).toEqual(task.artifacts);
    });

    it("a stream shows each one at once, whole, as an artifactUpdate before the task completes", async () => {
      harness.outbound.model = makeBoth;
      const who = newCaller();
      const events = await drain(
        await openStream("SendStreamingMessage", { message: message([{ text: "stream them" }]) }, { worker: edge.fetch, mint: who.mint }),
      );
      const updates = events.map((e, i) => ({ i, update: e.result.artifactUpdate })).filter((e) => e.update && e.update.artifact.artifactId !== "answer");
      expect(updates.map((e) => e.update.artifact.name).sort()).toEqual(["chart", "figures"]);
      for (const { update } of updates) expect(update).toMatchObject({ append: false, lastChunk: true });
      expect(updates.find((e) => e.update.artifact.name === "figures")!.update.artifact.parts).toEqual([{ data: { n: 3, squared: 9 } }]);
      const completed = events.findIndex((e) => e.result.statusUpdate?.status?.state === "TASK_STATE_COMPLETED");
      expect(Math.max(...updates.map((e) => e.i))).toBeLessThan(completed);
      // A late subscriber's replay carries the same events.
      const taskId = events[0]!.result.task.id;
      const replay = await drain(
        await openStream("SubscribeToTask", { id: taskId }, { worker: edge.fetch, mint: who.mint, headers: { "Last-Event-ID": "0" } }),
      );
      expect(replay.filter((e) => e.result.artifactUpdate?.artifact.name === "chart")).toHaveLength(1);
    });

    it("a retried step does not add a tool's artifact again: the journal replays the call without running it", async () => {
      let released = false;
      harness.outbound.model = async (c) => {
        if (toolMessages(c).length === 0) return chatToolCall("make_data", { n: 7 }, c.model);
        // The first run waits here, its tool done, until the object is reset under it.
        while (!released) await new Promise((resolve) => setTimeout(resolve, 10));
        return chatCompletion("after the retry", c.model);
      };
      const runsBefore = artifactTools.runs;
      const who = newCaller();
      const pending = rpc("SendMessage", { message: message([{ text: "once please" }]) }, who);
      await eventually(
        () => harness.outbound.modelCalls.length,
        (n) => n >= 2,
        "the model call after the tool",
      );
      expect(artifactTools.runs).toBe(runsBefore + 1);
      await runInDurableObject(who.stub, (_instance, state) => state.abort("the spec resets the object")).catch(() => undefined);
      released = true;
      const reply = await pending;
      const task = reply.body.result.task;
      expect(task.status.state).toBe("TASK_STATE_COMPLETED");
      // The retried step asked the model again (the same tool call) and got the recorded result.
      expect(harness.outbound.modelCalls.length).toBeGreaterThanOrEqual(4);
      expect(artifactTools.runs).toBe(runsBefore + 1);
      expect(named(task.artifacts, "figures")).toHaveLength(1);
      const events = await drain(
        await openStream("SubscribeToTask", { id: task.id }, { worker: edge.fetch, mint: who.mint, headers: { "Last-Event-ID": "0" } }),
      );
      expect(events.filter((e) => e.result.artifactUpdate?.artifact.name === "figures")).toHaveLength(1);
    });
  });

  describe("acceptedOutputModes", () => {
    const makeAll = (c: ModelCall) =>
      toolMessages(c).length === 0
        ? chatToolCalls(
            [
              { name: "make_data", args: { n: 2 } },
              { name: "make_file", args: { kind: "png" } },
              { name: "make_file", args: { kind: "markdown" } },
            ],
            c.model,
          )
        : chatCompletion("shaped", c.model);
    const byName = (artifacts: Array<{ name?: string; parts: unknown[] }>) => Object.fromEntries(artifacts.map((a) => [a.name, a.parts]));

    it("text only: data becomes its JSON, a text file its text, another file a note naming it; in the reply, GetTask and the push", async () => {
      harness.outbound.model = makeAll;
      const who = newCaller();
      const reply = await rpc(
        "SendMessage",
        {
          message: message([{ text: "shape them" }]),
          configuration: { acceptedOutputModes: ["text/plain"], taskPushNotificationConfig: { url: PUSH_URL, token: "t" } },
        },
        who,
      );
      const task = reply.body.result.task;
      expect(task.metadata[ACCEPTED_OUTPUT_MODES_KEY]).toEqual(["text/plain"]);
      const parts = byName(task.artifacts);
      expect(parts.answer).toEqual([{ text: "shaped" }]);
      expect(parts.figures).toEqual([{ text: '{"n":2,"squared":4}' }]);
      expect(parts.report).toEqual([{ text: "# Report\nAll good.", filename: "report.md" }]);
      const withheld = (parts.chart as Array<{ text: string }>)[0]!.text;
      expect(factsOf(withheld, mark("withheld"))).toEqual({ mediaType: "image/png", filename: "dot.png", artifact: { name: "chart" } });
      expect((await rpc("GetTask", { id: task.id }, who)).body.result.artifacts).toEqual(task.artifacts);
      const push = await eventually(
        () => harness.outbound.pushes.find((p) => p.body.task?.id === task.id),
        (p) => p !== undefined,
        "the terminal push",
      );
      expect(push!.body.task.artifacts).toEqual(task.artifacts);
    });

    it("on a stream, with images accepted: the PNG as it is, data as its JSON", async () => {
      harness.outbound.model = makeAll;
      const who = newCaller();
      const events = await drain(
        await openStream(
          "SendStreamingMessage",
          { message: message([{ text: "stream, shaped" }]), configuration: { acceptedOutputModes: ["text/plain", "image/*"] } },
          { worker: edge.fetch, mint: who.mint },
        ),
      );
      const updates = Object.fromEntries(
        events.flatMap((e) => (e.result.artifactUpdate ? [[e.result.artifactUpdate.artifact.name, e.result.artifactUpdate.artifact.parts]] : [])),
      );
      expect(updates.chart).toEqual([{ raw: PNG_BASE64, mediaType: "image/png", filename: "dot.png" }]);
      expect(updates.figures).toEqual([{ text: '{"n":2,"squared":4}' }]);
      expect(updates.report).toEqual([{ text: "# Report\nAll good.", filename: "report.md" }]);
      expect(events.at(-1)!.result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    });

    it("unset: every part as the tool wrote it", async () => {
      harness.outbound.model = makeAll;
      const task = (await rpc("SendMessage", { message: message([{ text: "as written" }]) }, newCaller())).body.result.task;
      expect(task.metadata?.[ACCEPTED_OUTPUT_MODES_KEY]).toBeUndefined();
      expect(byName(task.artifacts).report).toEqual([{ raw: b64("# Report\nAll good."), mediaType: "text/markdown", filename: "report.md" }]);
    });

    it("a mode that is not a media type is -32602", async () => {
      const reply = await rpc("SendMessage", { message: message([{ text: "x" }]), configuration: { acceptedOutputModes: ["png"] } }, newCaller());
      expect(reply.body.error.code).toBe(-32602);
      expect(reply.body.error.message).toContain("acceptedOutputModes");
    });
  });
});

describe("the reference tenants", () => {
  const harness = useTurnHarness();
  const newCaller = () => ({ tenant: "assistant", identity: { key: `caller-${crypto.randomUUID()}` } });

  it("the assistant reads a text file's URL from FETCH_ALLOWLIST", async () => {
    harness.outbound.pages.set(
      "https://developers.cloudflare.com/notes.txt",
      () => new Response("Workers run on V8 isolates.", { headers: { "Content-Type": "text/plain" } }),
    );
    harness.outbound.model = (c) => chatCompletion("read it", c.model);
    const reply = await call(
      "SendMessage",
      { message: message([{ text: "summarise" }, { url: "https://developers.cloudflare.com/notes.txt", mediaType: "text/plain" }]) },
      { mint: newCaller() },
    );
    expect(reply.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(JSON.stringify(userContentOf(harness.outbound.modelCalls[0]!))).toContain("Workers run on V8 isolates.");
  });

  it("a media type the card does not accept is -32005 at the edge, HTTP 200 with ErrorInfo, and no object is addressed", async () => {
    const edge = isolatedEdge();
    for (const part of [
      { raw: PNG_BASE64, mediaType: "image/png" },
      // No media type: application/octet-stream.
      { url: "https://developers.cloudflare.com/blob" },
    ]) {
      const reply = await call("SendMessage", { message: message([{ text: "look" }, part]) }, { worker: edge.fetch, mint: newCaller() });
      expect(reply.status).toBe(200);
      expect(reply.body.error.code).toBe(-32005);
      expect(reply.body.error.message).toContain("params.message.parts.1");
      expect(reply.body.error.data[0]).toMatchObject({ reason: "CONTENT_TYPE_NOT_SUPPORTED", domain: "a2a-protocol.org" });
    }
    // Bytes that are not base64 are a bad param, refused as early.
    const bad = await call("SendMessage", { message: message([{ raw: "not base64!", mediaType: "text/plain" }]) }, { worker: edge.fetch, mint: newCaller() });
    expect(bad.body.error.code).toBe(-32602);
    expect(bad.body.error.message).toContain("params.message.parts.0.raw");
    expect(edge.doAccesses()).toBe(0);
  });

  it("the cards say what the tenants take and give", async () => {
    const card = (await call("GetExtendedAgentCard", {}, { mint: newCaller() })).body.result;
    expect(card.defaultInputModes).toEqual(["text/plain", "application/json", "text/*"]);
    expect(card.defaultOutputModes).toEqual(["text/plain"]);
  });
});

describe("media types", () => {
  it("match exactly, by type/*, or by */*, ignoring parameters and case", () => {
    expect(acceptsMediaType(["text/*"], "Text/CSV; charset=utf-8")).toBe(true);
    expect(acceptsMediaType(["IMAGE/PNG"], "image/png")).toBe(true);
    expect(acceptsMediaType(["image/png"], "image/jpeg")).toBe(false);
    expect(acceptsMediaType(["*/*"], "application/octet-stream")).toBe(true);
    expect(acceptsMediaType(["text/plain"], "text/plain;format=flowed")).toBe(true);
    expect(acceptsMediaType(["text/plain"], "application/json")).toBe(false);
  });
});
