import { jcs } from "../a2a/jcs.js";
import type { MessageJson } from "./wire-json.js";

/**
 * What a message was, as a digest of its canonical JSON (RFC 8785): kept with
 * its `messageId`, so a retry that repeats it is told from one that reuses the
 * id for something else (-32602, docs/protocol.md "SendMessage").
 */
export async function messageFingerprint(message: MessageJson): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(jcs(message)));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
