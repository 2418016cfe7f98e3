import { createCompactFunction, isCompactionMessage, type Session, type SessionMessage } from "agents/sessions";

/**
 * The conversation a turn reads and extends. One per verified caller: the
 * caller's Durable Object holds exactly one.
 */
export interface SessionLike {
  /** Idempotent on `message.id`: a re-run turn step does not duplicate its messages. */
  append(message: SessionMessage): Promise<void>;
  /** The conversation as the model should see it, compaction summaries in place of what they fold. */
  history(): Promise<SessionMessage[]>;
}

export interface SessionBinding {
  /** Compact once the stored estimate passes this many tokens. */
  compactAfterTokens: number;
  /** The recent tail a compaction keeps verbatim. */
  keepRecentTokens: number;
  /** Turns a prompt into a summary (a model call). */
  summarize: (prompt: string) => Promise<string>;
  /** Hears the raw messages a compaction is about to fold. Must not throw (the runtime's fan-out does not). */
  onMessagesDisplaced: (messages: SessionMessage[]) => Promise<void>;
}

/**
 * Binds an `agents/sessions` handle as this platform's session: compaction
 * through the SDK's summarizer, with every displaced message announced
 * before the summary replaces it. The SDK has no displaced-messages hook, so
 * the compaction function is wrapped to see what it folds.
 */
export function bindSession(handle: Session, binding: SessionBinding): SessionLike {
  const compact = createCompactFunction({ summarize: binding.summarize, keepRecentTokens: binding.keepRecentTokens });
  handle
    .onCompaction(async (messages) => {
      const result = await compact(messages);
      if (!result) return null;
      const from = messages.findIndex((m) => m.id === result.fromMessageId);
      const to = messages.findIndex((m) => m.id === result.toMessageId);
      if (from >= 0 && to >= from) {
        // Announced before the overlay is stored: a listener that archives
        // them has them before the history stops showing them.
        await binding.onMessagesDisplaced(messages.slice(from, to + 1).filter((m) => !isCompactionMessage(m)));
      }
      return result;
    })
    .compactAfter(binding.compactAfterTokens);
  return {
    append: async (message) => void (await handle.appendMessage(message)),
    history: () => handle.getHistory(),
  };
}

/** A session kept in memory: for tests, and for code that must run without a Durable Object. */
export class MemorySession implements SessionLike {
  readonly messages: SessionMessage[] = [];

  async append(message: SessionMessage): Promise<void> {
    if (!this.messages.some((m) => m.id === message.id)) this.messages.push(message);
  }

  async history(): Promise<SessionMessage[]> {
    return [...this.messages];
  }
}

export { isCompactionMessage, type SessionMessage };
