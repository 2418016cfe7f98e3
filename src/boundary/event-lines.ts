// The framing of `EventLines` (caller-object.ts), shared by the object that
// writes them and the edge that reads them: one JSON object per line, the
// event's stored JSON spliced in unparsed.

const PREFIX = '{"seq":';
const EVENT = ',"event":';

/** One event as a line: `{"seq":n,"event":<eventJson>}\n`. */
export const eventLine = (seq: number, eventJson: string): string => `${PREFIX}${seq}${EVENT}${eventJson}}\n`;

/** A line back into its `seq` and the event's JSON text (as it was stored). */
export function readEventLine(line: string): { seq: number; eventJson: string } {
  const split = line.indexOf(EVENT);
  if (!line.startsWith(PREFIX) || split < 0 || !line.endsWith("}")) throw new SyntaxError("not an event line");
  return { seq: Number(line.slice(PREFIX.length, split)), eventJson: line.slice(split + EVENT.length, -1) };
}
