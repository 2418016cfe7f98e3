import type { RoundPolicy } from "@dynamicagents/core/round";

/** The researcher's words for the round loop. */
export const researchPolicy: RoundPolicy = {
  roundContract: [
    "You work in rounds. In each round either answer the user, or call the delegate tool once with every subtask you need now;",
    "their results arrive in the next round. Delegate only what you cannot answer from what you already know or were given.",
    "Run independent subtasks in the same delegation so they run at once.",
  ].join(" "),
  budgetExhaustedNote: "This is the last round: do not delegate any more. Answer now with what you have, and say what you could not find out.",
  messages: {
    failure: "Sorry, the research could not be completed because the model failed. Please try again in a moment.",
    budgetExhausted: "I ran out of research rounds before I could write an answer. Please narrow the question and ask again.",
    canceled: "Research canceled as requested.",
    progress: ({ round, subtasks, done, failed }) =>
      `working: round ${round}, ${subtasks} subtask${subtasks === 1 ? "" : "s"} (${done} done${failed ? `, ${failed} failed` : ""})`,
  },
};
