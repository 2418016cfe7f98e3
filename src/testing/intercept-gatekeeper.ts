import { vi } from "vitest";
import type { JWK } from "jose";

export interface CapturedPush {
  url: string;
  headers: Headers;
  /** The StreamResponse: `{task}` or `{statusUpdate}`. */
  body: { task?: any; statusUpdate?: any };
}

export interface GatekeeperIntercept extends Disposable {
  /** Every push the agent made, in order. */
  readonly pushes: CapturedPush[];
  /** Resolves with the task once a push announces it in a terminal state. */
  terminal(taskId: string, options?: { timeoutMs?: number }): Promise<any>;
  restore(): void;
}

const TERMINAL = new Set(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"]);

/**
 * Plays the gatekeeper's side of the network for a spec: serves its JWKS at
 * `<gatekeeper>/.well-known/jwks.json` and takes every push POSTed to its
 * origin. Anything else goes to the real `fetch` (and from there to the test
 * pool's outbound service: a cassette recorder, say).
 */
export function interceptGatekeeper(options: { gatekeeper: string; jwks: JWK[] }): GatekeeperIntercept {
  const pushes: CapturedPush[] = [];
  const original = globalThis.fetch;
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    const url = new URL(request.url);
    if (url.origin !== options.gatekeeper) return original(request);
    if (request.method === "GET" && url.pathname === "/.well-known/jwks.json") {
      return Response.json({ keys: options.jwks });
    }
    if (request.method === "POST") {
      pushes.push({ url: request.url, headers: new Headers(request.headers), body: (await request.json()) as CapturedPush["body"] });
      return new Response(null, { status: 200 });
    }
    return new Response("not found", { status: 404 });
  });
  return {
    pushes,
    async terminal(taskId, { timeoutMs = 10_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const push = pushes.find((p) => p.body.task?.id === taskId && TERMINAL.has(p.body.task.status?.state));
        if (push) return push.body.task;
        if (Date.now() > deadline) throw new Error(`no terminal push for task ${taskId} within ${timeoutMs} ms (${pushes.length} pushes seen)`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    restore: () => spy.mockRestore(),
    [Symbol.dispose]: () => spy.mockRestore(),
  };
}
