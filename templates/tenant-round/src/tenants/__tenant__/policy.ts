import type { AgentPolicy } from "@dynamicagents/core";
import { policy } from "../../policy.js";

/** The __tenant__ agent's words: the shared ones (src/policy.ts) and the round loop's, which a delegating agent must have. */
export const __name__Policy: AgentPolicy = {
  ...policy,
  rounds: {
    contract: [
      "You work in rounds. In each round either answer the user, or call the delegate tool once with every subtask you need now;",
      "their results arrive in the next round. Delegate only what you cannot answer from what you already know or were given.",
    ].join(" "),
    lastRoundNote: "This is the last round: do not delegate any more. Answer now with what you have, and say what you could not find out.",
    resultsHeader: "Results of the subtasks delegated so far:",
    progress: ({ round, subtasks, done, failed }) =>
      `working: round ${round}, ${subtasks} subtask${subtasks === 1 ? "" : "s"} (${done} done${failed ? `, ${failed} failed` : ""})`,
    notStarted: ({ subtasks, error }) => `I could not answer: none of the ${subtasks} subtask${subtasks === 1 ? "" : "s"} I delegated could start (${error}).`,
    delegate: {
      description: ({ catalogue, max }) =>
        `Delegate subtasks, run at once by subagents; their results arrive in the next round. At most ${max} per round. Subtask types (JSON: type, description, params schema):\n${catalogue}`,
      invalid: ({ problems }) =>
        `Nothing was delegated. Fix these and delegate again:\n${problems
          .map((p) =>
            p.unknownType
              ? `subtasks[${p.index}]: unknown type ${JSON.stringify(p.type)} (known: ${p.unknownType.join(", ")})`
              : `subtasks[${p.index}] (${p.type}): ${(p.issues ?? []).join("; ")}`,
          )
          .join("\n")}`,
      tooMany: ({ requested, max }) => `Too many subtasks: ${requested}, the limit is ${max} per round. Nothing was delegated.`,
      overCap: ({ existing, requested, max }) =>
        `Nothing was delegated by this call: this round already has ${existing} subtasks, and ${requested} more would pass the limit of ${max}.`,
      accepted: "Results arrive in the next round.",
    },
  },
};
