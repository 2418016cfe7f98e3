import type { AgentEvent } from "./catalogue.js";

/** Where events go. A sink never throws into the code that emitted. */
export type EventSink = (event: AgentEvent) => void;

/** One JSON line per event on the Worker's log (docs/telemetry.md "The log line"). */
export const jsonLogSink: EventSink = (event) => {
  console.log(JSON.stringify(event));
};

/** The subset of Analytics Engine's dataset binding events use. */
export interface AnalyticsDataset {
  writeDataPoint(point: { blobs?: string[]; doubles?: number[]; indexes?: string[] }): void;
}

/**
 * The numeric events as Analytics Engine data points (docs/telemetry.md
 * "Analytics Engine"): blobs `[event, tenant, what, outcome]`, doubles
 * `[durationMs, inputTokens, outputTokens, status]`, index the tenant.
 */
export function analyticsSink(dataset: AnalyticsDataset): EventSink {
  return (event) => {
    const point = dataPointOf(event);
    if (point)
      dataset.writeDataPoint({ blobs: [event.event, event.tenant ?? "", point.what, point.outcome], doubles: point.doubles, indexes: [event.tenant ?? ""] });
  };
}

function dataPointOf(event: AgentEvent): { what: string; outcome: string; doubles: number[] } | undefined {
  switch (event.event) {
    case "turn.finished":
      return { what: "", outcome: event.data.state, doubles: [event.data.durationMs, event.data.inputTokens, event.data.outputTokens, 0] };
    case "model.call":
      return { what: event.data.model, outcome: event.data.outcome, doubles: [event.data.durationMs, event.data.inputTokens, event.data.outputTokens, 0] };
    case "tool.call":
      return { what: event.data.tool, outcome: event.data.outcome, doubles: [event.data.durationMs, 0, 0, 0] };
    case "subtask.finished":
      return { what: event.data.type, outcome: event.data.outcome, doubles: [event.data.durationMs, 0, 0, 0] };
    case "push.attempt":
      return { what: event.data.configId, outcome: event.data.outcome, doubles: [event.data.durationMs, 0, 0, event.data.status] };
    case "edge.refused":
      return { what: event.data.check, outcome: String(event.data.code), doubles: [0, 0, 0, event.data.status] };
    case "quota.exceeded":
      return { what: event.data.limit, outcome: "refused", doubles: [0, 0, 0, 429] };
    default:
      return undefined;
  }
}
