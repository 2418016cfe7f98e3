import { tool, type Tool } from "ai";
import { z } from "zod";
import type { DelegateVerdict } from "../db/subtask-store.js";
import type { SubtaskType } from "../plugin/contract.js";
import { subtaskFingerprint } from "./fingerprint.js";

export const DELEGATE_TOOL = "delegate";

export interface Delegation {
  id: string;
  type: string;
  params: unknown;
  fingerprint: string;
}

const delegateInput = z.object({
  subtasks: z
    .array(z.object({ type: z.string().describe("a subtask type"), params: z.record(z.string(), z.unknown()).describe("the type's params") }))
    .min(1),
});

/**
 * The tool the model delegates with. Every requested subtask is checked
 * against its type's zod schema; a delegation with any invalid subtask is
 * answered with what is wrong, for the model to correct, and records
 * nothing. A valid one is handed to `record` as a whole.
 */
export function createDelegateTool(options: {
  types: ReadonlyMap<string, SubtaskType>;
  maxSubtasks: number;
  /** Records the delegation unless the round's cap would be passed. */
  record: (delegations: Delegation[]) => DelegateVerdict | Promise<DelegateVerdict>;
}): Tool {
  const catalogue = [...options.types.values()]
    .map((t) => `- ${t.key}: ${t.description}\n  params: ${JSON.stringify(z.toJSONSchema(t.params))}`)
    .join("\n");
  return tool({
    description: `Delegate durable subtasks, run concurrently by isolated subagents; their results arrive in the next round. At most ${options.maxSubtasks} per round, across all calls. Subtask types:\n${catalogue}`,
    inputSchema: delegateInput,
    execute: async ({ subtasks }) => {
      if (subtasks.length > options.maxSubtasks) {
        return { error: `Too many subtasks: ${subtasks.length}, the limit is ${options.maxSubtasks} per round. Nothing was delegated.` };
      }
      const problems: string[] = [];
      const valid: Delegation[] = [];
      for (const [i, requested] of subtasks.entries()) {
        const type = options.types.get(requested.type);
        if (!type) {
          problems.push(`subtasks[${i}]: unknown type ${JSON.stringify(requested.type)} (known: ${[...options.types.keys()].join(", ")})`);
          continue;
        }
        const parsed = type.params.safeParse(requested.params);
        if (!parsed.success) {
          problems.push(`subtasks[${i}] (${type.key}): ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "params"}: ${issue.message}`).join("; ")}`);
          continue;
        }
        valid.push({
          id: crypto.randomUUID(),
          type: type.key,
          params: parsed.data,
          fingerprint: await subtaskFingerprint(type.key, parsed.data, type.recipeVersion ?? 1),
        });
      }
      if (problems.length) return { error: `Nothing was delegated. Fix these and delegate again:\n${problems.join("\n")}` };
      const verdict = await options.record(valid);
      if (!verdict.recorded) {
        return {
          error: `Nothing was delegated by this call: this round already has ${verdict.existing} subtask${verdict.existing === 1 ? "" : "s"}, and ${valid.length} more would pass the limit of ${verdict.max} per round. Delegate at most ${Math.max(0, verdict.max - verdict.existing)} more, or wait for these results.`,
        };
      }
      return { delegated: valid.map((d) => ({ id: d.id, type: d.type })), note: "Results arrive in the next round." };
    },
  }) as Tool;
}
