import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { isCredentialHeader, redactUrl } from "./credentials.js";

/** The host the workerd side talks to the recorder on; it never reaches a network. */
export const VCR_CONTROL_ORIGIN = "http://vcr.invalid";

export interface Interaction {
  request: { method: string; url: string; headers: Record<string, string>; body: string };
  response: { status: number; headers: Record<string, string>; body: string };
}

export interface Cassette {
  name: string;
  interactions: Interaction[];
}

export interface VcrOptions {
  /** Where cassettes live: one JSON file per test. */
  cassettesDir: string;
  /** Record (forward to the network and write the cassette) instead of replaying. */
  record?: boolean;
  /**
   * More headers never written to disk (compared case-insensitively), on top
   * of every credential-bearing header, which is never written whatever this says.
   */
  excludeHeaders?: string[];
  /** Where a request goes while recording. Default: the real network. */
  upstream?: (request: Request) => Promise<Response>;
}

export interface Vcr {
  /** A miniflare `outboundService`: every fetch the Worker makes arrives here. */
  outboundService(request: Request): Promise<Response>;
}

/** `RECORD=1` records. */
export const recordFromEnv = (): boolean => process.env.RECORD === "1";

/**
 * Record and replay real HTTP for specs running in workerd. The specs say
 * which cassette is active over a control host; requests match on method,
 * URL and body, never on headers (a runtime upgrade that adds a header must
 * not invalidate a cassette). In replay mode a request with no recording is
 * blocked — answered with an error naming the cassette and the request, and
 * reported to the spec — and never reaches the network.
 *
 * Cassettes are committed, so no credential reaches one: credential headers
 * are dropped on both sides, and credential query values are replaced in the
 * URL, on record and on replay alike (so the rewritten URL still matches).
 */
export function createVcr(options: VcrOptions): Vcr {
  const excluded = new Set((options.excludeHeaders ?? []).map((h) => h.toLowerCase()));
  const upstream = options.upstream ?? ((request: Request) => fetch(request));
  let active: { cassette: Cassette; used: Set<number>; blocked: string[] } | undefined;

  const fileOf = (name: string) => join(options.cassettesDir, `${name}.json`);
  const keep = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => !excluded.has(name.toLowerCase()) && !isCredentialHeader(name)));

  async function control(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/use") {
      const { cassette: name } = (await request.json()) as { cassette: string };
      let cassette: Cassette = { name, interactions: [] };
      if (!options.record) {
        try {
          cassette = JSON.parse(await readFile(fileOf(name), "utf8")) as Cassette;
        } catch {
          // No cassette yet: every request of the test is blocked and reported.
        }
      }
      active = { cassette, used: new Set(), blocked: [] };
      return Response.json({ cassette: name, mode: options.record ? "record" : "replay", interactions: cassette.interactions.length });
    }
    if (path === "/eject") {
      const ejected = active;
      active = undefined;
      if (ejected && options.record && ejected.cassette.interactions.length > 0) {
        await mkdir(dirname(fileOf(ejected.cassette.name)), { recursive: true });
        await writeFile(fileOf(ejected.cassette.name), `${JSON.stringify(ejected.cassette, null, 2)}\n`);
      }
      return Response.json({ blocked: ejected?.blocked ?? [] });
    }
    return new Response("unknown VCR control", { status: 404 });
  }

  function blocked(why: string): Response {
    active?.blocked.push(why);
    return new Response(`VCR blocked this request: ${why}`, { status: 599, headers: { "x-vcr-blocked": "1" } });
  }

  return {
    async outboundService(request) {
      if (request.url.startsWith(`${VCR_CONTROL_ORIGIN}/`)) return control(request);
      const body = await request.text();
      // What is recorded, matched and reported: never the credentials in the real URL.
      const url = redactUrl(request.url);
      const described = `${request.method} ${url}${body ? ` (${body.length} bytes of body)` : ""}`;
      if (!active) return blocked(`no cassette is active for ${described}`);

      if (options.record) {
        const response = await upstream(new Request(request.url, { method: request.method, headers: request.headers, body: body || undefined }));
        const responseBody = await response.text();
        active.cassette.interactions.push({
          request: { method: request.method, url, headers: keep(request.headers), body },
          response: { status: response.status, headers: keep(response.headers), body: responseBody },
        });
        return new Response(responseBody, { status: response.status, headers: response.headers });
      }

      // Recorded URLs are redacted again so that a cassette written before a key was added to the list still matches.
      const index = active.cassette.interactions.findIndex(
        (i, n) => !active!.used.has(n) && i.request.method === request.method && redactUrl(i.request.url) === url && i.request.body === body,
      );
      if (index < 0) return blocked(`cassette "${active.cassette.name}" has no recording of ${described}`);
      active.used.add(index);
      const { response } = active.cassette.interactions[index]!;
      return new Response(response.body, { status: response.status, headers: response.headers });
    },
  };
}
