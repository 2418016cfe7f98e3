import { TaskAgent } from "@dynamicagents/core/host";
import type { Env } from "./env.js";

/** The `assistant` tenant's Durable Object: one instance per verified caller. */
export class AssistantAgent extends TaskAgent<Env> {}

/** The `researcher` tenant's Durable Object: one instance per verified caller. */
export class ResearcherAgent extends TaskAgent<Env> {}
