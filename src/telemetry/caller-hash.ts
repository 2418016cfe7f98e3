import { hex128 } from "./hex.js";

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey | undefined>>();

/**
 * The HMAC key events hash callers under: HKDF-SHA256 from the signing key's
 * private part, so it is as secret as that key, changes with it, and needs
 * no secret of its own. `undefined` when the signing key is unusable (the
 * edge refuses every call then anyway).
 */
function callerKey(signingKeySecret: string | undefined): Promise<CryptoKey | undefined> {
  const secret = signingKeySecret ?? "";
  let key = keys.get(secret);
  if (!key) {
    key = derive(secret);
    keys.set(secret, key);
  }
  return key;
}

async function derive(secret: string): Promise<CryptoKey | undefined> {
  let d: unknown;
  try {
    d = (JSON.parse(secret) as { d?: unknown }).d;
  } catch {
    return undefined;
  }
  if (typeof d !== "string" || d === "") return undefined;
  const material = await crypto.subtle.importKey("raw", encoder.encode(d), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode("dynamicagents.dev caller hash v1") },
    material,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign"],
  );
}

/** Who a caller is, as far as their Durable Object goes: the gatekeeper, the tenant, the identity key. */
export interface CallerOfEvents {
  gatekeeper: string;
  tenant: string;
  key: string;
}

/**
 * The caller's hash events carry: HMAC-SHA256 over the caller, 128 bits in
 * hex. Stable for a caller under one signing key, meaningless without it.
 */
export async function callerHash(signingKeySecret: string | undefined, caller: CallerOfEvents): Promise<string | undefined> {
  const key = await callerKey(signingKeySecret);
  if (!key) return undefined;
  return hex128(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(JSON.stringify([caller.gatekeeper, caller.tenant, caller.key])))));
}
