import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TurnWorkflowBase } from "@dynamicagents/core/turn";
import { captureConsole } from "./console-capture.js";
import type { SentRequest } from "@dynamicagents/core/testing";

/** What one turn cost, as {@link countTurns} counted it. */
export interface TurnCounts {
  /** `sql.exec` calls in Durable Objects of this isolate (the spec's one caller's object). */
  statements: number;
  /** The cursors' `rowsRead`, summed. */
  rowsRead: number;
  /** The cursors' `rowsWritten`, summed. */
  rowsWritten: number;
  /** Each statement's SQL and the rows it read and wrote, in order: where the rows go. */
  perStatement: Array<{ sql: string; rowsRead: number; rowsWritten: number }>;
  /** Calls on a Durable Object stub (edge → object, Workflow → object), by method. */
  rpcs: number;
  /** The same, by method name, in call order. */
  rpcMethods: string[];
  /** The objects' `alarm` runs: billed as requests too. */
  alarms: number;
  /** `step.do`, `step.sleep`, `step.sleepUntil` and `step.waitForEvent` of the turn's Workflow runs. */
  steps: number;
  /** Runs of the Workflow's `run` (one per instance, more if the engine replays it). */
  workflowRuns: number;
  /** Console lines of every level. */
  logLines: number;
  /** Those that are event lines (docs/telemetry.md "The log line"). */
  eventLines: number;
  /** The UTF-8 bytes of every console line: what log ingestion is billed on, before the platform's own attributes. */
  logBytes: number;
  /** Calls of the objects' storage API other than SQL (`setAlarm` is billed as a row written, KV calls as rows), by method (`kv.` for `storage.kv`). */
  storageCalls: Record<string, number>;
  /** Outbound fetches (model, push, JWKS), from the spec's intercepted network. */
  subrequests: number;
  /** Their method and URL, in order. */
  subrequestUrls: string[];
}

export interface TurnCounter {
  /** Stops counting and puts every patched method back; the counts so far. */
  stop(): TurnCounts;
}

type AnyFn = (this: unknown, ...args: unknown[]) => unknown;

/** Replaces `proto[name]` with `wrap(original)` until the returned function puts it back. */
function patch(proto: object, name: string, wrap: (original: AnyFn) => AnyFn): () => void {
  const own = Object.getOwnPropertyDescriptor(proto, name);
  const original = (proto as Record<string, AnyFn>)[name]!;
  Object.defineProperty(proto, name, { value: wrap(original), configurable: true, writable: true });
  return () => (own ? Object.defineProperty(proto, name, own) : delete (proto as Record<string, unknown>)[name]);
}

/** The storage API's methods that reach its SQLite besides `sql.exec` (docs/cost.md), and those of its synchronous KV (`storage.kv`). */
const STORAGE_METHODS = ["get", "put", "delete", "list", "deleteAll", "getAlarm", "setAlarm", "deleteAlarm", "transaction", "transactionSync"];
const KV_METHODS = ["get", "put", "delete", "list"];

/** Counts each call of `proto`'s `names` into `calls` (by `prefix` + name) until the returned functions put them back. */
function countCalls(proto: object, names: string[], prefix: string, calls: Record<string, number>): Array<() => void> {
  return names
    .filter((name) => typeof (proto as Record<string, unknown>)[name] === "function")
    .map((name) =>
      patch(
        proto,
        name,
        (method) =>
          function (this: unknown, ...args) {
            calls[prefix + name] = (calls[prefix + name] ?? 0) + 1;
            return method.apply(this, args);
          },
      ),
    );
}

const STEP_KINDS = new Set(["do", "sleep", "sleepUntil", "waitForEvent"]);

/** The runtime's classes, reached once through a throwaway object (made before any counting starts, so none of its work is counted). */
let runtimeClasses: Promise<{ sqlProto: object; storageProto: object; kvProto: object; agentProto: object }> | undefined;

function classesOfTheRuntime() {
  const probe = env.ASSISTANT.get(env.ASSISTANT.idFromName(`count-probe-${crypto.randomUUID()}`));
  return runInDurableObject(probe, (instance, state) => ({
    sqlProto: Object.getPrototypeOf(state.storage.sql) as object,
    storageProto: Object.getPrototypeOf(state.storage) as object,
    kvProto: Object.getPrototypeOf(state.storage.kv) as object,
    agentProto: Object.getPrototypeOf(instance) as object,
  }));
}

/**
 * Counts, from the spec's side only, what the Worker, its Durable Objects and its Workflow do until
 * `stop`: the runtime's own prototypes (SQLite storage, namespace stubs) and the turn Workflow's
 * `run` are wrapped for the while, so nothing in src/ counts. Everything the spec's isolate runs is
 * counted: a spec measuring one caller's turn must address no other object meanwhile.
 */
export async function countTurns(requests: SentRequest[]): Promise<TurnCounter> {
  const { sqlProto, storageProto, kvProto, agentProto } = await (runtimeClasses ??= classesOfTheRuntime());
  const namespaceProto = Object.getPrototypeOf(env.ASSISTANT) as object;

  const cursors: Array<{ sql: string; cursor: { rowsRead: number; rowsWritten: number } }> = [];
  const rpcMethods: string[] = [];
  let alarms = 0;
  const storageCalls: Record<string, number> = {};
  let steps = 0;
  let workflowRuns = 0;
  const countedStub = (stub: object) =>
    new Proxy(stub, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof prop !== "string" || typeof value !== "function" || prop === "then") return value;
        return (...args: unknown[]) => {
          rpcMethods.push(prop);
          return Reflect.apply(value as AnyFn, target, args);
        };
      },
    });
  const countedStep = (step: object) =>
    new Proxy(step, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (typeof prop === "string" && STEP_KINDS.has(prop)) steps++;
          return Reflect.apply(value as AnyFn, target, args);
        };
      },
    });
  const firstRequest = requests.length;
  const output = captureConsole();
  const restores = [
    patch(
      sqlProto,
      "exec",
      (exec) =>
        function (this: unknown, ...args) {
          const cursor = exec.apply(this, args) as { rowsRead: number; rowsWritten: number };
          cursors.push({ sql: String(args[0]), cursor });
          return cursor;
        },
    ),
    ...countCalls(storageProto, STORAGE_METHODS, "", storageCalls),
    ...countCalls(kvProto, KV_METHODS, "kv.", storageCalls),
    patch(
      namespaceProto,
      "get",
      (get) =>
        function (this: unknown, ...args) {
          return countedStub(get.apply(this, args) as object);
        },
    ),
    patch(
      agentProto,
      "alarm",
      (alarm) =>
        function (this: unknown, ...args) {
          alarms++;
          return alarm.apply(this, args);
        },
    ),
    patch(
      TurnWorkflowBase.prototype,
      "run",
      (run) =>
        function (this: unknown, event, step) {
          workflowRuns++;
          return run.call(this, event, countedStep(step as object));
        },
    ),
  ];
  return {
    stop() {
      for (const restore of restores.reverse()) restore();
      const lines = output.lines();
      const eventLines = output.events().length;
      output[Symbol.dispose]();
      const sent = requests.slice(firstRequest);
      return {
        statements: cursors.length,
        rowsRead: cursors.reduce((n, c) => n + c.cursor.rowsRead, 0),
        rowsWritten: cursors.reduce((n, c) => n + c.cursor.rowsWritten, 0),
        perStatement: cursors.map(({ sql, cursor }) => ({ sql, rowsRead: cursor.rowsRead, rowsWritten: cursor.rowsWritten })),
        rpcs: rpcMethods.length,
        rpcMethods,
        alarms,
        steps,
        workflowRuns,
        logLines: lines.length,
        eventLines,
        logBytes: lines.reduce((n, line) => n + new TextEncoder().encode(line).length, 0),
        storageCalls,
        subrequests: sent.length,
        subrequestUrls: sent.map((r) => `${r.method} ${r.url}`),
      };
    },
  };
}
