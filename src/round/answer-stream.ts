import type { PartJson } from "../boundary/index.js";

/** Deltas are written at most this often, or sooner once this much text waits: a chunk per token would be an event per token. */
const FLUSH_MS = 50;
const FLUSH_CHARS = 2048;

export interface AnswerChunk {
  parts: PartJson[];
  append: boolean;
  lastChunk: boolean;
}

/**
 * The answer as the model writes it, coalesced into artifact chunks. A step
 * (a retried one, a fallback model's) starts the artifact over: its first
 * chunk does not append.
 */
export class AnswerStream {
  #buffer = "";
  #append = false;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * `followed`: whether anyone reads the answer as it is written now (a
   * stream on the task); unset, nobody does, and the model need not stream.
   */
  constructor(
    private readonly write: (chunk: AnswerChunk) => void,
    private readonly followed: () => boolean = () => false,
  ) {}

  /** Whether the model should stream this answer: someone reads it as it is written. */
  get live(): boolean {
    return this.followed();
  }

  restart(): void {
    this.#clear();
    this.#buffer = "";
    this.#append = false;
  }

  delta(text: string): void {
    this.#buffer += text;
    if (this.#buffer.length >= FLUSH_CHARS) this.#flush(false);
    else this.#timer ??= setTimeout(() => this.#flush(false), FLUSH_MS);
  }

  /** The answer is complete: what is left goes out as the last chunk. */
  end(): void {
    if (this.#buffer || this.#append) this.#flush(true);
    else this.#clear();
  }

  /** Stops without a last chunk (a canceled round). */
  stop(): void {
    this.#clear();
  }

  #flush(lastChunk: boolean): void {
    this.#clear();
    if (!this.#buffer && !lastChunk) return;
    this.write({ parts: [{ text: this.#buffer }], append: this.#append, lastChunk });
    this.#append = true;
    this.#buffer = "";
  }

  #clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
