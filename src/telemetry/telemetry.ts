import { EVENT_LINE_TYPE, type AgentEvent, type EventCatalogue, type EventName, type EventScope, type PluginEventData } from "./catalogue.js";
import { eventIdOf } from "./event-id.js";
import type { EventSink } from "./sinks.js";

/** Hears every event an object emits (a plugin's `onEvent`). Its failure is logged and never reaches the turn. */
export type EventSubscriber = (event: AgentEvent) => void | Promise<void>;

export interface TelemetryOptions {
  sinks: readonly EventSink[];
  subscribers?: readonly EventSubscriber[];
  /**
   * Values that must never leave in an event (the deployment's and the
   * plugins' secrets): a string field that holds one is replaced. Values
   * shorter than 8 characters are ignored (they would match by chance).
   */
  secrets?: readonly (string | undefined)[];
  now?: () => number;
}

const REDACTED = "[redacted]";
const MIN_SECRET = 8;

/**
 * Emits events to the sinks and subscribers, in the order they were emitted.
 * `occurrence` names what makes the event unique (a journal key, a step's
 * name, a request id): its id is derived from it, so an occurrence seen twice
 * (a replayed step) carries the same `eventId` both times. Emitting never
 * throws and never waits for a subscriber.
 */
export class Telemetry {
  readonly #sinks: readonly EventSink[];
  readonly #subscribers: readonly EventSubscriber[];
  readonly #secrets: readonly string[];
  readonly #now: () => number;
  #queue: Promise<void> = Promise.resolve();

  constructor(options: TelemetryOptions) {
    this.#sinks = options.sinks;
    this.#subscribers = options.subscribers ?? [];
    this.#secrets = worthLookingFor(options.secrets ?? []);
    this.#now = options.now ?? Date.now;
  }

  emit<N extends EventName>(name: N, scope: EventScope, data: EventCatalogue[N], occurrence: readonly (string | number)[]): Promise<void> {
    return this.#send(name, scope, data, occurrence);
  }

  /** A plugin's own event, named `plugin.<key>.<name>`. */
  emitPlugin(plugin: string, name: string, scope: EventScope, data: PluginEventData, occurrence: readonly (string | number)[]): Promise<void> {
    return this.#send(`plugin.${plugin}.${name}`, scope, data, occurrence);
  }

  /** Resolves once everything emitted so far has reached the sinks. */
  flushed(): Promise<void> {
    return this.#queue;
  }

  /**
   * The event as it would be emitted now, reaching no sink and no subscriber:
   * a log line rebuilt for an occurrence emitted before (same id).
   */
  line<N extends EventName>(name: N, scope: EventScope, data: EventCatalogue[N], occurrence: readonly (string | number)[]): Promise<AgentEvent> {
    return this.#lineOf(name, scope, data, occurrence)();
  }

  /** The line's fields scrubbed now; its id, derived asynchronously, when the returned function is called. */
  #lineOf(name: string, scope: EventScope, data: object, occurrence: readonly (string | number)[]): () => Promise<AgentEvent> {
    const at = new Date(this.#now()).toISOString();
    const line = { ...scrubbed(scope, this.#secrets), data: scrubbed(data, this.#secrets) };
    return async () => {
      const eventId = await eventIdOf([name, scope.tenant ?? "", scope.taskId ?? "", ...occurrence]);
      return { type: EVENT_LINE_TYPE, v: 1, event: name, eventId, at, ...line } as AgentEvent;
    };
  }

  #send(name: string, scope: EventScope, data: object, occurrence: readonly (string | number)[]): Promise<void> {
    const lineOf = this.#lineOf(name, scope, data, occurrence);
    this.#queue = this.#queue.then(async () => {
      const event = await lineOf();
      for (const sink of this.#sinks) {
        try {
          sink(event);
        } catch (error) {
          console.warn(`an event sink failed on ${name}: ${error instanceof Error ? error.name : "error"}`);
        }
      }
      for (const subscriber of this.#subscribers) {
        // Not awaited: a slow subscriber never holds the next event or the turn.
        Promise.resolve()
          .then(() => subscriber(event))
          .catch((error: unknown) => console.warn(`an event subscriber failed on ${name}: ${error instanceof Error ? error.name : "error"}`));
      }
    });
    return this.#queue;
  }
}

/** Secrets of at least {@link MIN_SECRET} characters: a shorter one would match by chance. */
const worthLookingFor = (secrets: readonly (string | undefined)[]): string[] =>
  secrets.filter((s): s is string => typeof s === "string" && s.length >= MIN_SECRET);

/**
 * The events' scrubbing, for a log line that quotes what someone else said
 * (a model provider's error can quote the API key it was sent): a copy of
 * `value` in which every string that holds one of `secrets` is `"[redacted]"`.
 */
export const scrubSecrets = <T>(value: T, secrets: readonly (string | undefined)[]): T => scrubbed(value, worthLookingFor(secrets));

/** A copy of `value` in which every string that holds a secret is replaced: fail closed, whatever the field. */
function scrubbed<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return secrets.some((s) => v.includes(s)) ? REDACTED : v;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
