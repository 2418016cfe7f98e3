import { env } from "cloudflare:workers";
import { createA2AWorker, type A2AWorkerOptions } from "@dynamicagents/core/worker";
import { assistantManifest, deployment, researcherManifest } from "../../reference/manifests.js";
import type { Env } from "../../reference/env.js";
import type { Fetcher } from "./rpc.js";

export interface IsolatedEdge {
  fetch: Fetcher;
  /** How many times any Durable Object was addressed (idFromName/get on a namespace). */
  doAccesses: () => number;
}

/**
 * A fresh edge with its own JWKS and card caches, wired to the real Durable
 * Object namespaces through a counter, so a spec can prove a refused request
 * never addressed one. `vars` override the test env's variables (PUBLIC_ORIGIN, say).
 */
export function isolatedEdge(options: Partial<A2AWorkerOptions<Env>> = {}, vars: Partial<Env> = {}): IsolatedEdge {
  let accesses = 0;
  const counted = (namespace: DurableObjectNamespace): DurableObjectNamespace =>
    new Proxy(namespace, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (prop === "idFromName" || prop === "get" || prop === "getByName" || prop === "idFromString") accesses++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  const worker = createA2AWorker<Env>({
    deployment,
    tenants: {
      assistant: { manifest: assistantManifest, agent: (e) => counted(e.ASSISTANT) },
      researcher: { manifest: researcherManifest, agent: (e) => counted(e.RESEARCHER) },
    },
    ...options,
  });
  const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;
  return {
    fetch: async (request) => worker.fetch(request, { ...(env as unknown as Env), ...vars }, ctx),
    doAccesses: () => accesses,
  };
}
