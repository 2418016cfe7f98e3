// The Worker the specs run against: the reference deployment as it ships,
// plus the specs' own agents (test/support/agents.ts) under bindings of
// their own (vitest.config.ts), which the reference edge never addresses.
export { default } from "../../reference/worker.js";
export * from "../../reference/worker.js";
export {
  BrokenAgent,
  MarkerAgent,
  MarkerResearcher,
  MarkerSubagent,
  MarkerTurnWorkflow,
  ObservedAgent,
  TwoLinesAgent,
  UnlistedResearcher,
  UnlistedSubagent,
} from "./agents.js";
export { McpMarkerAgent } from "./mcp-agent.js";
