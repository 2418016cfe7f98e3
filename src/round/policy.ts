/**
 * Every string the round loop emits. Core ships the machine and none of the
 * words: a missing string is a start-up error, never a silent default.
 */
export interface RoundPolicy {
  /** Held to the model in every round: how and when to delegate. */
  roundContract: string;
  /** Appended in the last round: the budget is spent, answer now. */
  budgetExhaustedNote: string;
  messages: {
    /** The task's message when the model fails on every model. */
    failure: string;
    /** The answer when the last round still produced none. */
    budgetExhausted: string;
    /** The task's message when it is canceled. */
    canceled: string;
    /** The progress line pushed after each round. */
    progress: (p: { round: number; subtasks: number; done: number; failed: number }) => string;
  };
}

/** Refuses a policy with a missing or empty string, naming it. */
export function validateRoundPolicy(policy: RoundPolicy | undefined): RoundPolicy {
  const missing: string[] = [];
  const text = (value: unknown, name: string) => {
    if (typeof value !== "string" || value.trim() === "") missing.push(name);
  };
  text(policy?.roundContract, "roundContract");
  text(policy?.budgetExhaustedNote, "budgetExhaustedNote");
  text(policy?.messages?.failure, "messages.failure");
  text(policy?.messages?.budgetExhausted, "messages.budgetExhausted");
  text(policy?.messages?.canceled, "messages.canceled");
  if (typeof policy?.messages?.progress !== "function") missing.push("messages.progress");
  if (missing.length) {
    throw new Error(`roundPolicy() is missing ${missing.join(", ")}: the round loop has no words of its own, every string comes from the policy`);
  }
  return policy!;
}
