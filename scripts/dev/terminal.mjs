// Text from outside (an agent's reply, a status line, an error body, a task id)
// on the developer's terminal. Control characters are shown, never obeyed: an
// ESC sequence could otherwise move the cursor, clear the screen, retitle the
// terminal or write to the clipboard (OSC 52), and a CR could overwrite a line.

// C0 except tab (0x09) and newline (0x0a), DEL, and C1 (0x80-0x9f: 0x9b is a one-byte CSI, 0x9d an OSC).
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` with every control character except newline and tab written as a
 * `\uXXXX` escape, so printing it cannot drive the terminal.
 * @param {unknown} text
 */
export function printable(text) {
  return String(text).replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
