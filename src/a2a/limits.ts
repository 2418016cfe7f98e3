import type { Message } from "@a2a-js/sdk";
import { invalidParams } from "./errors.js";
import { MAX_TEXT_BYTES } from "./wire.js";

/**
 * Refuses a message whose text parts, concatenated without a separator and
 * trimmed, exceed {@link MAX_TEXT_BYTES} bytes of UTF-8.
 */
export function assertTextWithinLimit(message: Message): void {
  let text = "";
  for (const part of message.parts) if (part.content?.$case === "text") text += part.content.value;
  const bytes = new TextEncoder().encode(text.trim()).byteLength;
  if (bytes > MAX_TEXT_BYTES) {
    throw invalidParams(`Message text is ${bytes.toLocaleString("en-US")} bytes of UTF-8; the limit is 262,144 bytes`);
  }
}
