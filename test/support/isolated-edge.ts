import { env } from "cloudflare:workers";
import type { AgentNamespace, CallerObject } from "@dynamicagents/core/boundary";
import { createA2AWorker, type A2AWorkerOptions } from "@dynamicagents/core/worker";
import { assistantManifest, deployment, researcherManifest } from "../../reference/manifests.js";
import { markerTenants } from "./agents.js";

/** The test worker's bindings: the reference's and the specs' own agents. */
type Env = Cloudflare.Env;
import type { Fetcher } from "./rpc.js";

export interface IsolatedEdge {
  fetch: Fetcher;
  /** How many times any Durable Object was addressed (idFromName/get on a namespace). */
  doAccesses: () => number;
  /** Resolves once everything the edge handed to `waitUntil` so far has settled. */
  backgroundSettled: () => Promise<void>;
}

/**
 * A fresh edge with its own JWKS and card caches, wired to the real Durable
 * Object namespaces through a counter, so a spec can prove a refused request
 * never addressed one. `vars` override the test env's variables (PUBLIC_ORIGIN, say).
 */
export function isolatedEdge(options: Partial<A2AWorkerOptions<Env>> = {}, vars: Partial<Env> = {}): IsolatedEdge {
  let accesses = 0;
  const counted = (namespace: AgentNamespace): AgentNamespace =>
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
  const background: Array<Promise<unknown>> = [];
  const ctx = {
    waitUntil: (promise: Promise<unknown>) => background.push(promise),
    passThroughOnException: () => {},
    props: {},
  } as unknown as ExecutionContext;
  return {
    fetch: async (request) => worker.fetch(request, { ...env, ...vars }, ctx),
    doAccesses: () => accesses,
    backgroundSettled: async () => void (await Promise.allSettled(background)),
  };
}

/**
 * A stand-in for a caller's object, for `resolveAgent`: each given method's
 * result goes through `structuredClone`, as a value crossing the Durable
 * Object boundary does; a method not given throws.
 */
export function stubAgent(methods: Partial<Record<keyof CallerObject, (...args: any[]) => unknown>>): CallerObject {
  return new Proxy({} as CallerObject, {
    get(_target, prop) {
      if (prop === "then") return undefined; // not a thenable
      const method = methods[prop as keyof CallerObject];
      if (!method) return () => Promise.reject(new Error(`stub agent: ${String(prop)} is not stubbed`));
      return async (...args: unknown[]) => structuredClone(await method(...args));
    },
  });
}

/** An edge serving the specs' own agents (test/support/agents.ts), their turns on the marker Workflow; `options` add to it. */
export const markerEdge = (vars: Partial<Env> = {}, options: Partial<A2AWorkerOptions<Env>> = {}): IsolatedEdge =>
  isolatedEdge(
    {
      deployment,
      tenants: markerTenants,
      startTurn: async (turn, e) => void (await e.MARKER_WORKFLOW!.create({ id: turn.instanceId, params: turn.params })),
      ...options,
    },
    vars,
  );
