import { tool, type Tool } from "ai";
import { z } from "zod";
import type { DelegateWords, DelegationProblem } from "../agent/policy.js";
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
  subtasks: z.array(z.object({ type: z.string().describe("a subtask type"), params: z.record(z.string(), z.unknown()).describe("the type's params") })).min(1),
});

/**
 * The tool the model delegates with. Every requested subtask is checked
 * against its type's zod schema; a delegation with any invalid subtask is
 * answered with what is wrong, for the model to correct, and records
 * nothing. A valid one is handed to `record` as a whole. Every sentence comes
 * from the agent's `words`; core adds the catalogue, limits and issues.
 */
export function createDelegateTool(options: {
  types: ReadonlyMap<string, SubtaskType>;
  maxSubtasks: number;
  words: DelegateWords;
  /** Records the delegation unless the round's cap would be passed. */
  record: (delegations: Delegation[]) => DelegateVerdict | Promise<DelegateVerdict>;
}): Tool {
  const { words, maxSubtasks: max } = options;
  const catalogue = JSON.stringify([...options.types.values()].map((t) => ({ type: t.key, description: t.description, params: z.toJSONSchema(t.params) })));
  return tool({
    description: words.description({ catalogue, max }),
    inputSchema: delegateInput,
    execute: async ({ subtasks }) => {
      if (subtasks.length > max) return { error: words.tooMany({ requested: subtasks.length, max }) };
      const problems: DelegationProblem[] = [];
      const valid: Delegation[] = [];
      for (const [index, requested] of subtasks.entries()) {
        const type = options.types.get(requested.type);
        if (!type) {
          problems.push({ index, type: requested.type, unknownType: [...options.types.keys()] });
          continue;
        }
        const parsed = type.params.safeParse(requested.params);
        if (!parsed.success) {
          problems.push({ index, type: type.key, issues: parsed.error.issues.map((issue) => `${issue.path.join(".") || "params"}: ${issue.message}`) });
          continue;
        }
        valid.push({
          id: crypto.randomUUID(),
          type: type.key,
          params: parsed.data,
          fingerprint: await subtaskFingerprint(type.key, parsed.data, type.recipeVersion ?? 1),
        });
      }
      if (problems.length) return { error: words.invalid({ problems }) };
      const verdict = await options.record(valid);
      if (!verdict.recorded) return { error: words.overCap({ existing: verdict.existing, requested: valid.length, max: verdict.max }) };
      // Types and params only: the model has no use for ids, and a replayed request must be byte for byte the same.
      return { delegated: valid.map((d) => ({ type: d.type, params: d.params })), note: words.accepted };
    },
  }) as Tool;
}
