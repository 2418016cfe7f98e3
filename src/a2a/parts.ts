// Parts and media types as the platform reads them (docs/protocol.md
// "SendMessage" → Parts): what media type a part is, whether a list of modes
// (a card's `defaultInputModes`, a client's `acceptedOutputModes`) takes it,
// and whether a part is well formed. Shared by the edge and the caller's object.

/** A part in its wire form, as far as these rules read it. */
interface WirePart {
  text?: string;
  data?: unknown;
  url?: string;
  raw?: string;
  mediaType?: string;
}

/** Where a task keeps the `acceptedOutputModes` of the send that opened it, so every later reply applies them. */
export const ACCEPTED_OUTPUT_MODES_KEY = "https://dynamicagents.dev/acceptedOutputModes";

/** A card's input modes when its manifest names none (what `buildCardWire` serves then). */
export const cardInputModes = (modes: readonly string[] | undefined): readonly string[] => modes ?? ["text/plain"];

/** `type/subtype`, lower-cased, parameters dropped; `undefined` for anything else. */
export function essenceOf(mediaType: string | undefined): string | undefined {
  const essence = (mediaType ?? "").split(";", 1)[0]!.trim().toLowerCase();
  return /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/.test(essence) ? essence : undefined;
}

/** The media type a part counts as: text is `text/plain`, data `application/json`, a file its own (default `application/octet-stream`). */
export function partMediaType(part: WirePart): string {
  if (part.text !== undefined) return "text/plain";
  if (part.data !== undefined) return "application/json";
  return essenceOf(part.mediaType) ?? "application/octet-stream";
}

/** Whether `modes` take `mediaType`: exact, `type/*` or `*\/*`, parameters and case ignored. */
export function acceptsMediaType(modes: readonly string[], mediaType: string): boolean {
  const wanted = essenceOf(mediaType);
  if (!wanted) return modes.some((mode) => essenceOf(mode) === "*/*");
  const [type] = wanted.split("/");
  return modes.some((mode) => {
    const essence = essenceOf(mode);
    return essence === wanted || essence === "*/*" || essence === `${type}/*`;
  });
}

/** Proto3 JSON bytes: standard or URL-safe base64, padding optional. */
export function isBase64(value: string): boolean {
  return /^[A-Za-z0-9+/_-]*={0,2}$/.test(value) && value.replace(/=+$/, "").length % 4 !== 1;
}

/** The bytes of a base64 string (either alphabet, padded or not). */
export function base64Bytes(value: string): Uint8Array {
  const binary = atob(value.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, ""));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Standard, padded base64 of `bytes`. */
export function bytesBase64(bytes: Uint8Array): string {
  let binary = "";
  // In slices: spreading a whole file into one call overflows the argument limit.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** A text file's text, in its declared charset when the runtime knows it, else UTF-8. */
export function textOf(bytes: Uint8Array, mediaType: string | undefined): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(mediaType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder().decode(bytes);
  }
}

/** How many bytes a base64 string holds, without decoding it. */
export const base64Length = (value: string): number => Math.floor((value.replace(/=+$/, "").length * 3) / 4);

/** What is wrong with a part, or `undefined`: exactly one of text, data, url, raw, and raw in base64. */
export function partProblem(part: WirePart): string | undefined {
  const kinds = (["text", "data", "url", "raw"] as const).filter((k) => part[k] !== undefined);
  if (kinds.length !== 1) return "a part carries exactly one of text, data, url or raw";
  if (part.raw !== undefined && (typeof part.raw !== "string" || !isBase64(part.raw))) return "raw must be base64";
  return undefined;
}
