export { EVENT_LINE_TYPE, type AgentEvent, type EventCatalogue, type EventLine, type EventName, type EventScope, type PluginEventData } from "./catalogue.js";
export { callerHash, type CallerOfEvents } from "./caller-hash.js";
export { analyticsSink, jsonLogSink, type AnalyticsDataset, type EventSink } from "./sinks.js";
export { Telemetry, scrubSecrets, type EventSubscriber, type TelemetryOptions } from "./telemetry.js";
export { PushLog, TurnLog, type TurnLogLine, type TurnSummary } from "./turn-log.js";
