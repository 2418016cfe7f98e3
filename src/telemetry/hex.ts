/** The first 16 bytes (128 bits) of a digest, in lower-case hex. */
export function hex128(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes.subarray(0, 16)) out += byte.toString(16).padStart(2, "0");
  return out;
}
