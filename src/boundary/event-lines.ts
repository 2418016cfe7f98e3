// The framing of `EventLines` (caller-object.ts), shared by the object that
// writes them and the edge that reads them: one JSON object per line, the
// event's stored JSON spliced in unparsed; a stream the object ends itself
// (its task was erased) ends with a closing line, which the edge relays as a
// comment.

const PREFIX = '{"seq":';
const EVENT = ',"event":';
const CLOSING = '{"closing":';

/** One event as a line: `{"seq":n,"event":<eventJson>}\n`. */
export const eventLine = (seq: number, eventJson: string): string => `${PREFIX}${seq}${EVENT}${eventJson}}\n`;

/** The last line of a stream the object ends itself: why, in a few words for a comment (`{"closing":"…"}`). */
export const closingLine = (why: string): string => `${CLOSING}${JSON.stringify(why)}}\n`;

/** A line back into its `seq` and the event's JSON text (as it was stored), or the reason of a closing line. */
export function readEventLine(line: string): { seq: number; eventJson: string } | { closing: string } {
  if (line.startsWith(CLOSING)) return { closing: String(JSON.parse(line.slice(CLOSING.length, -1))) };
  const split = line.indexOf(EVENT);
  if (!line.startsWith(PREFIX) || split < 0 || !line.endsWith("}")) throw new SyntaxError("not an event line");
  return { seq: Number(line.slice(PREFIX.length, split)), eventJson: line.slice(split + EVENT.length, -1) };
}
