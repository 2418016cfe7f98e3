import type { CallerObject } from "./caller-object.js";
import type { TurnObject } from "./turn-object.js";

/**
 * A caller's Durable Object as everything outside it sees it: the edge's
 * methods and the turn Workflow's. Bindings are typed with it
 * (`DurableObjectNamespace<AgentObject>`), so no stub needs a cast and no
 * caller imports an agent class.
 */
export interface AgentObject extends CallerObject, TurnObject, Rpc.DurableObjectBranded {}

export type AgentNamespace = DurableObjectNamespace<AgentObject>;
