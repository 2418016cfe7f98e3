import { RpcError, toRpcErrorValue, type RpcErrorValue } from "../a2a/errors.js";

/**
 * What every method across a Durable Object, facet or Workflow boundary
 * returns: the value, or the refusal as a value. Refusals travel as values
 * because workerd rebuilds a thrown error on the caller's side as a bare
 * `Error`, losing its code. Across the edge's boundary the refusal is the
 * A2A error the edge answers with.
 */
export type Verdict<T, Refusal = RpcErrorValue> = { ok: true; value: T } | { ok: false; error: Refusal };

export const accepted = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });
export const refused = <Refusal>(error: Refusal): { ok: false; error: Refusal } => ({ ok: false, error });

/** Runs `work` on the object's side: its value, or the A2A error it threw, as a verdict. */
export function settle<T>(work: () => T): Verdict<T> {
  try {
    return accepted(work());
  } catch (error) {
    if (error instanceof RpcError) return refused(toRpcErrorValue(error));
    throw error;
  }
}

/** On the caller's side: the value, or the refusal raised again as the A2A error it is. */
export function unwrap<T>(verdict: Verdict<T>): T {
  if (verdict.ok) return verdict.value;
  throw new RpcError(verdict.error.code, verdict.error.message, verdict.error.data);
}
