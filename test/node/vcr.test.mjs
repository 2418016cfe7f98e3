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

const control = (vcr, path, body) => vcr.outboundService(new Request(`http://vcr.invalid${path}`, { method: "POST", body: body && JSON.stringify(body) }));

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

  it("writes no credential of either side to disk, header or query, and still replays", async () => {
    const secrets = ["cookie-secret", "azure-secret", "gateway-secret", "session-secret", "SECRET", "sig-secret", "amz-secret", "tok-secret"];
    const upstream = async () =>
      new Response('{"answer":42}', {
        headers: { "content-type": "application/json", "set-cookie": "sid=session-secret; HttpOnly", "x-request-id": "r1" },
      });
    const request = () =>
      new Request("https://model.test/v1/chat/completions?key=SECRET&x=1&Signature=sig-secret&X-Amz-Security-Token=amz-secret&access_token=tok-secret", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          cookie: "sid=cookie-secret",
          "api-key": "azure-secret",
          "cf-aig-authorization": "Bearer gateway-secret",
        },
        body: '{"q":1}',
      });
    const recorder = createVcr({ cassettesDir: dir, record: true, upstream });
    await control(recorder, "/use", { cassette: "suite/credentials" });
    // The upstream still gets the real request, and the Worker the real response.
    expect(await (await recorder.outboundService(request())).json()).toEqual({ answer: 42 });
    await control(recorder, "/eject");

    const file = await readFile(join(dir, "suite/credentials.json"), "utf8");
    for (const secret of secrets) expect(file).not.toContain(secret);
    expect(file).not.toMatch(/cookie|api-key|cf-aig-authorization/i);
    const [interaction] = JSON.parse(file).interactions;
    expect(interaction.request.url).toBe(
      "https://model.test/v1/chat/completions?key=REDACTED&x=1&Signature=REDACTED&X-Amz-Security-Token=REDACTED&access_token=REDACTED",
    );
    expect(interaction.response.headers).toEqual({ "content-type": "application/json", "x-request-id": "r1" });

    const { upstream: counting, calls } = countingUpstream();
    const player = createVcr({ cassettesDir: dir, record: false, upstream: counting });
    await control(player, "/use", { cassette: "suite/credentials" });
    const replayed = await player.outboundService(request());
    expect(replayed.status).toBe(200);
    expect(await replayed.json()).toEqual({ answer: 42 });
    expect(calls).toHaveLength(0);
    // A blocked request is reported with its credentials redacted too.
    const stray = await player.outboundService(new Request("https://model.test/v1/models?api_key=stray-secret"));
    expect(await stray.text()).toContain("GET https://model.test/v1/models?api_key=REDACTED");
    expect(JSON.stringify(await (await control(player, "/eject")).json())).not.toContain("stray-secret");
  });

  it("strips credential headers even when a caller lists other headers to exclude", async () => {
    const upstream = async () => Response.json({}, { headers: { "x-trace": "t1" } });
    const recorder = createVcr({ cassettesDir: dir, record: true, upstream, excludeHeaders: ["X-Trace"] });
    await control(recorder, "/use", { cassette: "suite/exclude" });
    await recorder.outboundService(modelRequest());
    await control(recorder, "/eject");
    const file = await readFile(join(dir, "suite/exclude.json"), "utf8");
    expect(file).not.toMatch(/sk-secret|k-secret|x-trace/i);
  });

  it("leaves a URL without credentials byte for byte as it was", async () => {
    const url = "http://pages.test/search?q=a%20b+c&max_results=5&keyword=x&note=token";
    await record("suite/plain-url", [new Request(url)]);
    const file = JSON.parse(await readFile(join(dir, "suite/plain-url.json"), "utf8"));
    expect(file.interactions[0].request.url).toBe(url);
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
