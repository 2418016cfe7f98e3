import type { Message } from "@a2a-js/sdk";
import { invalidParams } from "./errors.js";
import { essenceOf } from "./parts.js";
import { MAX_CONTENT_BYTES } from "./wire.js";

/**
 * Refuses a message whose content exceeds {@link MAX_CONTENT_BYTES}
 * (docs/protocol.md "SendMessage" → Content limit): the UTF-8 bytes of its
 * text parts, concatenated without a separator and trimmed, plus the JSON of
 * every data part and the bytes of every inline `text/*` file. Those are what
 * the model is given as they are (src/round/user-content.ts), and what stays
 * in the conversation; other files are bounded by the body limit and the
 * agent's inline-file budget.
 */
export function assertContentWithinLimit(message: Message): void {
  const encoder = new TextEncoder();
  let text = "";
  let bytes = 0;
  for (const part of message.parts) {
    const content = part.content;
    if (content?.$case === "text") text += content.value;
    else if (content?.$case === "data") bytes += encoder.encode(JSON.stringify(content.value ?? null)).byteLength;
    else if (content?.$case === "raw" && essenceOf(part.mediaType)?.startsWith("text/")) bytes += content.value.byteLength;
  }
  bytes += encoder.encode(text.trim()).byteLength;
  if (bytes > MAX_CONTENT_BYTES) {
    throw invalidParams(
      `Message content is ${bytes.toLocaleString("en-US")} bytes (text parts as UTF-8, data parts as JSON, inline text/* files); the limit is 262,144 bytes`,
    );
  }
}
