import { StreamResponse } from "@a2a-js/sdk";
import type { JWK } from "jose";
import { vi } from "vitest";
import { WireShapeError, wireShapeProblems } from "./wire-round-trip.js";

export interface CapturedPush {
  url: string;
  headers: Headers;
  /** The StreamResponse: `{task}` or `{statusUpdate}`. */
  body: { task?: any; statusUpdate?: any };
}

/** One request the Worker sent out, as a plain record: its method and URL, and its W3C trace context headers when it carried them. */
export interface SentRequest {
  method: string;
  url: string;
  traceparent?: string;
  tracestate?: string;
}

export interface GatekeeperIntercept extends Disposable {
  /** Every request the Worker sent out while intercepted, as plain records (docs/telemetry.md "Trace context" says which carry a trace). */
  readonly requests: SentRequest[];
  /** Every push the gatekeeper accepted (answered 2xx), in order. */
  readonly pushes: CapturedPush[];
  /** What the gatekeeper's JWKS serves; replace it to rotate keys mid-spec. */
  jwks: JWK[];
  /** Resolves with the task once a push announces it in a terminal state. */
  terminal(taskId: string, options?: { timeoutMs?: number }): Promise<any>;
  /** Stops intercepting; throws a `WireShapeError` if any push taken was not exactly an A2A `StreamResponse`. */
  restore(): void;
}

export interface InterceptOptions {
  /** The gatekeeper's origin: its JWKS is served there, and POSTs there are pushes. */
  gatekeeper: string;
  jwks: JWK[];
  /** More origins whose POSTs count as pushes (a second gatekeeper, a loopback one). */
  pushOrigins?: string[];
  /**
   * Answers a request before the defaults do (a webhook that is down, a fake
   * model, a page); `undefined` falls through. A push it answers with 2xx is
   * still captured.
   */
  respond?: (request: Request) => Response | undefined | Promise<Response | undefined>;
}

const TERMINAL = new Set(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"]);

/**
 * Plays the gatekeeper's side of the network for a spec: serves its JWKS at
 * `<gatekeeper>/.well-known/jwks.json` and takes every push POSTed to its
 * origin. Anything else goes to the real `fetch` (and from there to the test
 * pool's outbound service: a cassette recorder, say).
 */
export function interceptGatekeeper(options: InterceptOptions): GatekeeperIntercept {
  const original = globalThis.fetch;
  const pushOrigins = new Set([options.gatekeeper, ...(options.pushOrigins ?? [])]);
  const intercept: GatekeeperIntercept = {
    requests: [],
    pushes: [],
    jwks: [...options.jwks],
    async terminal(taskId, { timeoutMs = 10_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const push = intercept.pushes.find((p) => p.body.task?.id === taskId && TERMINAL.has(p.body.task.status?.state));
        if (push) return push.body.task;
        if (Date.now() > deadline) throw new Error(`no terminal push for task ${taskId} within ${timeoutMs} ms (${intercept.pushes.length} pushes seen)`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    restore,
    [Symbol.dispose]: restore,
  };
  /** Every push body that is not exactly a StreamResponse (src/testing/wire-round-trip.ts), reported when the intercept ends. */
  const misshapen: string[] = [];
  function restore() {
    spy.mockRestore();
    if (misshapen.length) throw new WireShapeError(`pushes that are not exactly an A2A 1.0 StreamResponse: ${misshapen.splice(0).join(" | ")}`);
  }
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    // Plain records: a Request belongs to the Durable Object that made it and
    // cannot be read from the spec while that object is still busy.
    const [traceparent, tracestate] = [request.headers.get("traceparent"), request.headers.get("tracestate")];
    intercept.requests.push({ method: request.method, url: request.url, ...(traceparent ? { traceparent } : {}), ...(tracestate ? { tracestate } : {}) });
    const url = new URL(request.url);
    const isPush = request.method === "POST" && pushOrigins.has(url.origin);
    const custom = options.respond ? await options.respond(request.clone()) : undefined;
    if (custom) {
      if (isPush && custom.ok) await capture(request);
      return custom;
    }
    if (request.method === "GET" && url.origin === options.gatekeeper && url.pathname === "/.well-known/jwks.json") {
      return Response.json({ keys: intercept.jwks });
    }
    if (isPush) {
      await capture(request);
      return new Response(null, { status: 200 });
    }
    return original(request);
  });
  async function capture(request: Request) {
    const body = (await request.json()) as CapturedPush["body"];
    const problems = wireShapeProblems(StreamResponse, body);
    if (problems.length) misshapen.push(`${request.url}: ${problems.join("; ")}`);
    intercept.pushes.push({ url: request.url, headers: new Headers(request.headers), body });
  }
  return intercept;
}
