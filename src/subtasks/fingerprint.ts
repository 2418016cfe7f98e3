import { jcs } from "../a2a/jcs.js";

/**
 * What a finished subtask result is valid for: the subtask type, its params
 * (canonical JSON, so key order does not matter) and the recipe version. A
 * cached result is reused only under the same fingerprint.
 */
export async function subtaskFingerprint(type: string, params: unknown, recipeVersion = 1): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(jcs([type, params, recipeVersion])));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
