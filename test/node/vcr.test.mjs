// The cassette recorder (Node realm): what it writes, what it replays, what it blocks.
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createVcr } from "../../src/testing/node/vcr.ts";
import { cassetteName } from "../../src/testing/vcr.ts";

let dir;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "vcr-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const control = (vcr, path, body) =>
  vcr.outboundService(new Request(`http://vcr.invalid${path}`, { method: "POST", body: body && JSON.stringify(body) }));

function countingUpstream() {
  const calls = [];
  return {
    calls,
    upstream: async (request) => {
      calls.push({ url: request.url, body: await request.text() });
      return Response.json({ answer: `reply ${calls.length}` }, { headers: { "x-api-key": "server-secret", "x-request-id": "r1" } });
    },
  };
}

const modelRequest = (body = '{"q":1}') =>
  new Request("https://model.test/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-secret", "x-api-key": "k-secret" },
    body,
  });

async function record(name, requests) {
  const { upstream, calls } = countingUpstream();
  const vcr = createVcr({ cassettesDir: dir, record: true, upstream });
  await control(vcr, "/use", { cassette: name });
  const replies = [];
  for (const request of requests) replies.push(await (await vcr.outboundService(request)).json());
  await control(vcr, "/eject");
  return { replies, calls };
}

describe("the VCR", () => {
  it("records, then replays the same exchange without reaching upstream", async () => {
    const recorded = await record("suite/test-a", [modelRequest()]);
    expect(recorded.replies).toEqual([{ answer: "reply 1" }]);

    const { upstream, calls } = countingUpstream();
    const vcr = createVcr({ cassettesDir: dir, record: false, upstream });
    await control(vcr, "/use", { cassette: "suite/test-a" });
    const replayed = await vcr.outboundService(modelRequest());
    expect(replayed.status).toBe(200);
    expect(await replayed.json()).toEqual({ answer: "reply 1" });
    expect(calls).toHaveLength(0);
    expect(await (await control(vcr, "/eject")).json()).toEqual({ blocked: [] });
  });

  it("never writes excluded headers to disk, and does not match on headers", async () => {
    await record("suite/headers", [modelRequest()]);
    const file = await readFile(join(dir, "suite/headers.json"), "utf8");
    expect(file).not.toMatch(/sk-secret|k-secret|server-secret|authorization|x-api-key/i);
    expect(file).toContain("x-request-id");

    const vcr = createVcr({ cassettesDir: dir, record: false });
    await control(vcr, "/use", { cassette: "suite/headers" });
    const other = new Request("https://model.test/v1/chat/completions", { method: "POST", headers: { "x-new-runtime-header": "1" }, body: '{"q":1}' });
    expect((await vcr.outboundService(other)).status).toBe(200);
  });

  it("blocks a request whose body differs, naming the cassette and the request, and reports it", async () => {
    await record("suite/body", [modelRequest('{"q":1}')]);
    const { upstream, calls } = countingUpstream();
    const vcr = createVcr({ cassettesDir: dir, record: false, upstream });
    await control(vcr, "/use", { cassette: "suite/body" });
    const response = await vcr.outboundService(modelRequest('{"q":2}'));
    expect(response.status).toBe(599);
    const message = await response.text();
    expect(message).toContain('cassette "suite/body"');
    expect(message).toContain("POST https://model.test/v1/chat/completions");
    expect(calls).toHaveLength(0);
    const { blocked } = await (await control(vcr, "/eject")).json();
    expect(blocked).toHaveLength(1);
  });

  it("blocks everything while no cassette is active", async () => {
    const { upstream, calls } = countingUpstream();
    const vcr = createVcr({ cassettesDir: dir, record: false, upstream });
    const response = await vcr.outboundService(modelRequest());
    expect(response.status).toBe(599);
    expect(await response.text()).toContain("no cassette is active");
    expect(calls).toHaveLength(0);
  });

  it("gives two tests two cassettes, named from file, describe and test", async () => {
    const a = cassetteName("/repo/test/turn.spec.ts", "accept, then notify > delivers the answer");
    const b = cassetteName("/repo/test/turn.spec.ts", "accept, then notify > retries a webhook");
    expect(a).toBe("turn/accept-then-notify/delivers-the-answer");
    expect(b).not.toBe(a);
    await record(a, [modelRequest('{"q":"a"}')]);
    await record(b, [modelRequest('{"q":"b"}')]);
    expect((await readdir(join(dir, "turn/accept-then-notify"))).sort()).toEqual(["delivers-the-answer.json", "retries-a-webhook.json"]);
  });

  it("replays repeated identical requests in recorded order", async () => {
    await record("suite/repeat", [modelRequest(), modelRequest()]);
    const vcr = createVcr({ cassettesDir: dir, record: false });
    await control(vcr, "/use", { cassette: "suite/repeat" });
    expect(await (await vcr.outboundService(modelRequest())).json()).toEqual({ answer: "reply 1" });
    expect(await (await vcr.outboundService(modelRequest())).json()).toEqual({ answer: "reply 2" });
    expect((await vcr.outboundService(modelRequest())).status).toBe(599);
  });
});
