import { describe, expect, it } from "vitest";
import { chatCompletion, chatToolCall, eventually } from "./support/outbound.js";
import { call, drain, openStream, sendParams, userMessage } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

// Shaped like an API key, so the reference plugins' credential redactor replaces it.
const CREDENTIAL = "sk-live-4f9a8b7c6d5e4f3a2b1c";
const REPLACED = "[redacted credential]";
const newCaller = (tenant = "assistant") => ({ tenant, identity: { key: `caller-${crypto.randomUUID()}` } });

const harness = useTurnHarness();

async function finished() {
  const instances = await eventually(
    () => harness.workflows.get(),
    (found) => found.length > 0,
    "the turn's Workflow",
  );
  await instances[0]!.waitForStatus("complete");
}

describe("what the model reads passes the plugins' redactors", () => {
  it("a tool that throws: the assistant's fetch_page error reaches the model redacted", async () => {
    const page = "https://developers.cloudflare.com/flaky";
    harness.outbound.pages.set(page, () => {
      throw new TypeError(`connection reset while reading a response that began "api_key=${CREDENTIAL}"`);
    });
    harness.outbound.model = (c) =>
      c.messages.some((m) => m.role === "tool") ? chatCompletion("could not read it", c.model) : chatToolCall("fetch_page", { url: page }, c.model);
    await call("SendMessage", sendParams("read the flaky page"), { mint: newCaller() });
    await finished();

    expect(harness.outbound.modelCalls).toHaveLength(2);
    const toolMessages = JSON.stringify(harness.outbound.modelCalls[1]!.messages.filter((m) => m.role === "tool"));
    expect(toolMessages).toContain("connection reset while reading");
    expect(toolMessages).toContain(REPLACED);
    expect(toolMessages).not.toContain(CREDENTIAL);
  });

  it("a subtask result: the researcher's next round reads it redacted", async () => {
    const page = "https://developers.cloudflare.com/leaky";
    harness.outbound.pages.set(page, () => new Response(`<p>Deploy with the key ${CREDENTIAL} and enjoy.</p>`));
    harness.outbound.model = (c) => {
      const first = String(c.messages[0]?.content ?? "");
      // The subagent's summary quotes the page, credential and all.
      if (first.startsWith("Summarise what the page says")) return chatCompletion(`The page says: ${String(c.messages.at(-1)?.content)}`, c.model);
      const results = c.messages.some((m) => String(m.content ?? "").startsWith("Results of the subtasks"));
      return results
        ? chatCompletion("done", c.model)
        : chatToolCall("delegate", { subtasks: [{ type: "read_page", params: { url: page, question: "how to deploy?" } }] }, c.model);
    };
    await call("SendMessage", sendParams("how do I deploy?"), { mint: newCaller("researcher") });
    await finished();

    const round2 = harness.outbound.modelCalls.filter((c) => c.messages.some((m) => String(m.content ?? "").startsWith("Results of the subtasks")));
    expect(round2).toHaveLength(1);
    const results = String(round2[0]!.messages.find((m) => String(m.content ?? "").startsWith("Results of the subtasks"))!.content);
    expect(results).toContain("Deploy with the key");
    expect(results).toContain(REPLACED);
    expect(results).not.toContain(CREDENTIAL);
  });

  it("a tool's arguments in a progress tracker: the assistant's fetch_page shows its URL, the credential in it redacted", async () => {
    const PROGRESS = "https://a2a-protocol.org/extensions/task-progress/v1";
    const page = `https://developers.cloudflare.com/keyed?api_key=${CREDENTIAL}`;
    harness.outbound.pages.set(page, () => new Response("<p>a page</p>"));
    harness.outbound.model = (c) =>
      c.messages.some((m) => m.role === "tool") ? chatCompletion("read it", c.model) : chatToolCall("fetch_page", { url: page }, c.model);
    const stream = await openStream(
      "SendStreamingMessage",
      { message: userMessage("read the keyed page") },
      { mint: newCaller(), headers: { "A2A-Extensions": PROGRESS } },
    );
    const events = await drain(stream);
    const trackers = events.flatMap((e) => e.result.statusUpdate?.metadata?.[PROGRESS]?.trackers ?? []);
    const calls = trackers.filter((t: { id: string }) => t.id.startsWith("tool:"));
    expect(calls.map((t: { status: string }) => t.status)).toEqual(["running", "completed"]);
    expect(calls[0].message).toContain(`calling fetch_page with {"url":"https://developers.cloudflare.com/keyed?api_key=${REPLACED}"}`);
    expect(JSON.stringify(events)).not.toContain(CREDENTIAL);
  });
});
