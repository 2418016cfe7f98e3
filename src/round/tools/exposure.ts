import type { StepResult, ToolSet } from "ai";
import type { AgentConfig } from "../../agent/config.js";
import { FIND_TOOLS_TOOL, findToolsTool, foundInMessages, foundInSteps } from "./find-tools.js";
import type { RankedTool } from "./ranker.js";

type ToolsConfig = AgentConfig["tools"];
export type Exposure = ToolsConfig["defaultExposure"];

/**
 * How a tool reaches the model: the `exposure` key naming it exactly, else
 * the longest `*` key prefixing it, else `defaultExposure`.
 */
export function exposureOf(name: string, config: Pick<ToolsConfig, "exposure" | "defaultExposure">): Exposure {
  const exact = config.exposure[name];
  if (exact) return exact;
  let best: { length: number; exposure: Exposure } | undefined;
  for (const [key, exposure] of Object.entries(config.exposure)) {
    if (!key.endsWith("*")) continue;
    const prefix = key.slice(0, -1);
    if (name.startsWith(prefix) && (!best || prefix.length > best.length)) best = { length: prefix.length, exposure };
  }
  return best?.exposure ?? config.defaultExposure;
}

/** A turn's tools sorted out under the config, before any step. */
export interface ExposurePlan {
  /**
   * Every tool registered this turn: the offered ones but the `never` ones.
   * Registered, a held-back tool still runs where the SDK runs calls without
   * a step (an approved call, on resume), journaled like any other.
   */
  tools: ToolSet;
  /** The control tools sent on every step (`ask_user`, `delegate`, `find_tools` when there is anything to search). */
  controls: string[];
  /** The tools sent on every step, by name. */
  always: string[];
  /** What `find_tools` searches, by name: the `search` tools and the always-tools past the budget. Empty: no `find_tools`. */
  searchable: RankedTool[];
  /** Schemas for the non-control tools of one step: the always-tools, then the tools found. */
  budget: number;
  /** Whether some tool is held back from some step (else every step is sent every tool, and nothing need be chosen). */
  holdsBack: boolean;
}

const sortedNames = (names: string[]) => names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** A description the ranker can read: one computed per call (from a context) counts as none. */
const descriptionOf = (tool: ToolSet[string] | undefined) => (typeof tool?.description === "string" ? tool.description : "");

/**
 * Sorts the offered tools out: `never` ones go, always-tools fill the
 * schema budget by name, and the rest wait to be found. Whenever anything is
 * on search, the always-tools leave room for one search's results, or what
 * `find_tools` finds could never be sent. `searchWords`: whether the policy
 * has `find_tools`'s description; without it nothing is searched.
 */
export function planExposure(options: { tools: ToolSet; controls: readonly string[]; config: ToolsConfig; searchWords: boolean }): ExposurePlan {
  const { config } = options;
  const tools: ToolSet = {};
  const always: string[] = [];
  const search: string[] = [];
  for (const [name, tool] of Object.entries(options.tools)) {
    const exposure = exposureOf(name, config);
    if (exposure === "never") continue;
    tools[name] = tool;
    (exposure === "always" ? always : search).push(name);
  }
  sortedNames(always);
  const room = Math.max(0, config.maxSchemas - options.controls.length);
  // `find_tools` takes a schema of its own, and is worth it only with room left for what it finds.
  const searching = options.searchWords && room > 1 && (search.length > 0 || always.length > room);
  const budget = searching ? room - 1 : room;
  const alwaysRoom = searching ? budget - Math.min(config.searchResults, budget) : budget;
  const sent = always.slice(0, alwaysRoom);
  const searchable = searching ? sortedNames([...search, ...always.slice(alwaysRoom)]).map((name) => ({ name, description: descriptionOf(tools[name]) })) : [];
  return {
    tools,
    controls: [...options.controls, ...(searching ? [FIND_TOOLS_TOOL] : [])],
    always: sent,
    searchable,
    budget,
    holdsBack: sent.length < Object.keys(tools).length,
  };
}

/**
 * The tools one step is sent: the controls, the always-tools, and of the
 * tools found so far (newest `find_tools` call first, each call's best
 * first) as many as the budget leaves room for.
 */
function activeToolNames(plan: ExposurePlan, found: readonly (readonly string[])[]): string[] {
  const searchable = new Set(plan.searchable.map((t) => t.name));
  const chosen = new Set<string>();
  const room = plan.budget - plan.always.length;
  for (const names of [...found].reverse()) {
    for (const name of names) {
      if (chosen.size >= room) break;
      if (searchable.has(name)) chosen.add(name);
    }
  }
  return [...plan.controls, ...plan.always, ...chosen];
}

/** A turn's tools as one exchange registers them, and which of them each step is sent. */
export interface ExposedTools {
  /** Every tool that may run: the offered ones but the `never` ones, the control tools, and `find_tools` when anything is on search. */
  offered: ToolSet;
  /** The tools a step is sent, given the exchange's steps so far; undefined when every step is sent every tool. */
  activeTools?: (steps: readonly StepResult<ToolSet>[]) => string[];
}

/**
 * The exposure policy applied to one exchange. `earlier`: the turn's own
 * messages before it (as stored: JSON), whose `find_tools` results count as
 * found, so a later exchange or round (and a re-run of this one, which the
 * journal answers the same) is sent the same tools.
 */
export function exposeTools(options: {
  tools: ToolSet;
  controls: ToolSet;
  config: ToolsConfig;
  findToolsDescription: string | undefined;
  earlier: readonly string[];
}): ExposedTools {
  const { findToolsDescription: description } = options;
  const plan = planExposure({ tools: options.tools, controls: Object.keys(options.controls), config: options.config, searchWords: description !== undefined });
  const offered: ToolSet = { ...plan.tools, ...options.controls };
  if (description !== undefined && plan.searchable.length > 0) {
    offered[FIND_TOOLS_TOOL] = findToolsTool({ description, searchable: plan.searchable, limit: options.config.searchResults });
  }
  if (!plan.holdsBack) return { offered };
  const before = foundInMessages(options.earlier.map((json): unknown => JSON.parse(json)));
  return { offered, activeTools: (steps) => activeToolNames(plan, [...before, ...foundInSteps(steps)]) };
}
