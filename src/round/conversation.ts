import type { ModelMessage } from "ai";
import type { AgentConfig } from "../agent/config.js";
import { generateWithFallback } from "../agent/generate.js";
import type { TaskJson } from "../boundary/index.js";
import type { ConversationStore, ConversationWindow, EntryRow } from "../db/conversation-store.js";
import type { LoopDeps } from "./deps.js";

/** A stored entry back in the model's form (the store keeps it as the JSON the model read). */
const messageOf = (row: EntryRow) => JSON.parse(row.messageJson) as ModelMessage;

/** A compaction's summary, as stored. */
interface Summary {
  text: string;
}

/** The model request's messages for a turn: the summary (under the agent's heading), the committed tail, the turn's own. */
export function windowMessages(window: ConversationWindow, summaryHeading: string): ModelMessage[] {
  const messages: ModelMessage[] = [];
  if (window.summary) messages.push({ role: "user", content: `${summaryHeading}\n${(JSON.parse(window.summary.messageJson) as Summary).text}` });
  for (const row of [...window.committed, ...window.own]) messages.push(messageOf(row));
  return messages;
}

/** How long a compaction may hold its conversation's lease before another may take over. */
const COMPACTION_LEASE_MS = 5 * 60_000;

export interface CompactionDeps {
  store: ConversationStore;
  conversationId: string;
  history: AgentConfig["history"];
  /** The agent's instructions for the summary. */
  instructions: string;
  /** One model call: instructions and a transcript in, the summary out ("" when it failed). */
  summarize: (instructions: string, transcript: string) => Promise<string>;
  /** Hears the raw messages a compaction folds, before they go. Must not throw. */
  onDisplaced: (messages: ModelMessage[]) => Promise<void>;
  now?: () => number;
}

/**
 * Folds a conversation's older turns into a summary once its unfolded turns
 * pass the agent's threshold, keeping the newest turns verbatim. At most one
 * compaction runs per conversation (a lease in the store); the folded
 * messages are announced to the plugins, then deleted, so a conversation's
 * storage stays bounded as it grows. Returns how many messages it folded (0: none).
 */
export async function compactConversation(deps: CompactionDeps): Promise<number> {
  const { store, conversationId, history } = deps;
  if (store.unfoldedTokens(conversationId) <= history.compactAfterTokens) return 0;
  const now = (deps.now ?? Date.now)();
  if (!store.claimCompaction(conversationId, now + COMPACTION_LEASE_MS)) return 0;
  try {
    const folded = store.foldable(conversationId, history.keepRecentTokens);
    if (folded.length === 0) return 0;
    const previous = store.window(conversationId, "", 0).summary;
    const transcript = [
      ...(previous ? [JSON.stringify({ summary: (JSON.parse(previous.messageJson) as Summary).text })] : []),
      ...folded.map((row) => row.messageJson),
    ].join("\n");
    const text = (await deps.summarize(deps.instructions, transcript)).trim();
    if (!text) return 0;
    await deps.onDisplaced(folded.map(messageOf));
    store.folded(conversationId, { text } satisfies Summary, folded.at(-1)!.id);
    return folded.length;
  } finally {
    store.releaseCompaction(conversationId);
  }
}

/**
 * After a turn ends, its conversation is compacted if it grew past the
 * threshold, with `summarize` making the summary; a compaction that folded
 * anything is an event. Never rejects: a failed one is tried again after the next turn.
 */
export async function compactAfterTurn(deps: LoopDeps, task: TaskJson, summarize: CompactionDeps["summarize"]): Promise<void> {
  const conversationId = deps.conversationOf(task);
  const started = Date.now();
  try {
    const folded = await compactConversation({
      store: deps.db.conversations,
      conversationId,
      history: deps.config.history,
      instructions: deps.policy.messages.summarize,
      summarize,
      onDisplaced: (messages) => deps.runtime.onMessagesDisplaced(messages),
    });
    if (folded > 0) {
      const data = { folded, durationMs: Date.now() - started };
      deps.events.emit("conversation.compacted", undefined, data, [conversationId, crypto.randomUUID()], { contextId: task.contextId });
    }
  } catch (error) {
    console.error(`compaction of conversation ${conversationId} failed; it is tried again after the next turn`, error);
  }
}

/** The model call a compaction summarizes with, under the agent's own instructions; "" when every model failed. */
export async function summarizeWith(deps: LoopDeps, instructions: string, transcript: string): Promise<string> {
  const { env, config, models } = deps;
  const result = await generateWithFallback({ env, config: config.model, instructions, messages: [{ role: "user", content: transcript }], models });
  // A summary costs the caller like a turn does (no task: today's total only).
  if (result.ok) deps.db.usage.record(undefined, { inputTokens: result.inputTokens, outputTokens: result.outputTokens, modelCalls: 1 });
  // An empty summary leaves history as it is: compaction is skipped, not wrong.
  return result.ok ? result.text : "";
}
