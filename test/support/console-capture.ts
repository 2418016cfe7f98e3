import { EVENT_LINE_TYPE, type AgentEvent } from "@dynamicagents/core/telemetry";
import { vi } from "vitest";

const LEVELS = ["log", "info", "warn", "error", "debug"] as const;

export interface CapturedConsole {
  /** Every console line since the capture began, every level, in order, as text (an error with its stack). */
  lines(): string[];
  /** The event lines among them, parsed (docs/telemetry.md "The log line"). */
  events(): AgentEvent[];
  [Symbol.dispose](): void;
}

const textOf = (value: unknown): string => {
  if (value instanceof Error) return `${value.name}: ${value.message}\n${value.stack ?? ""}`;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};

const eventOf = (line: string): AgentEvent | undefined => {
  try {
    const parsed = JSON.parse(line) as { type?: unknown };
    return parsed?.type === EVENT_LINE_TYPE ? (parsed as AgentEvent) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Watches the console, the objects' too (the test pool runs them in the
 * specs' isolate). Everything still reaches the real console, so the run's
 * output holds it for the canary check (scripts/check/canaries.mjs).
 */
export function captureConsole(): CapturedConsole {
  const spies = LEVELS.map((level) => vi.spyOn(console, level));
  const lines = () =>
    spies
      .flatMap((spy) => spy.mock.calls.map((args, i) => ({ order: spy.mock.invocationCallOrder[i] ?? 0, text: args.map(textOf).join(" ") })))
      .sort((a, b) => a.order - b.order)
      .map((line) => line.text);
  return {
    lines,
    events: () => lines().flatMap((line) => eventOf(line) ?? []),
    [Symbol.dispose]: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}
