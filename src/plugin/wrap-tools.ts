import type { ToolSet } from "ai";

/** A tool's `execute`, as the wrappers see it. */
export type Execute = (input: unknown, options: unknown) => unknown;

/**
 * The same tools, each `execute` replaced by `wrap(toolName, execute)`.
 * Tools without one (control tools the turn handles itself) pass unchanged.
 */
export function wrapExecutes<T extends ToolSet>(tools: T, wrap: (toolName: string, execute: Execute) => Execute): T {
  const wrapped: ToolSet = {};
  for (const [toolName, tool] of Object.entries(tools)) {
    const execute = tool.execute as Execute | undefined;
    wrapped[toolName] = execute ? ({ ...tool, execute: wrap(toolName, execute) } as ToolSet[string]) : tool;
  }
  return wrapped as T;
}
