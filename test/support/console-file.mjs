// Every console line the suite's code wrote, passed or failed, into one file: `npm test` prints
// a test's lines only when it fails (vitest `silent: "passed-only"`), and the canary check
// (scripts/check/canaries.mjs, run by CI) reads this file beside the printed output.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export class ConsoleFileReporter {
  /** @param {string} file */
  constructor(file) {
    this.file = file;
  }

  onInit() {
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, "");
  }

  /** @param {{ content: string; type: string }} log */
  onUserConsoleLog(log) {
    appendFileSync(this.file, log.content.endsWith("\n") ? log.content : `${log.content}\n`);
  }
}
