import { hex128 } from "./hex.js";

const encoder = new TextEncoder();

/**
 * An event's id from what makes its occurrence unique (the task, the turn,
 * the step, the journal key…): the same occurrence seen again — a Workflow
 * step replayed, a transition re-reported — gets the same id, and what went
 * into it (a tool's input, say) cannot be read back out.
 */
export async function eventIdOf(parts: readonly (string | number)[]): Promise<string> {
  return hex128(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(JSON.stringify(parts)))));
}
