// The floor with the contract's work (bench/README.md "Floor"): the floor
// worker's caller object plus, in the least code, what docs/protocol.md,
// docs/conversations.md and docs/telemetry.md ask of every turn and the
// issue's floor leaves out:
// idempotency by messageId, one conversation per contextId (read for the
// model, appended to), a persisted event log with `seq`, a turn record the
// delivery clears (what recovery reads), the model through the `ai` SDK, and
// the log's two JSON lines a turn (docs/telemetry.md "Which lines":
// `task.accepted`, and a wide `turn.finished` written after the first push
// with the turn's figures, folded in memory). Raw SQL, no plugins, no quotas.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, type LanguageModel, type ModelMessage } from "ai";
import { FloorCaller, type FloorBegin, type TaskJson } from "./worker.ts";

/** Built once per isolate, as the project's `chooseModels` does. */
let model: LanguageModel | undefined;

/** One event as docs/telemetry.md "The log line" shapes it; the ids are random here, not derived. */
function line(event: string, task: TaskJson, data: Record<string, unknown>): void {
  const eventId = crypto.randomUUID().replaceAll("-", "");
  const scope = { tenant: "assistant", caller: "0".repeat(32), taskId: task.id, contextId: task.contextId, turnId: task.id };
  console.log(JSON.stringify({ type: "dynamicagents.event", v: 1, event, eventId, at: new Date().toISOString(), ...scope, data }));
}

/** What a turn's wide line says of its model call and round, kept in memory from the call to the push. */
interface Figures {
  inputTokens: number;
  outputTokens: number;
  modelMs: number;
  state?: string;
  durationMs?: number;
}

/** The wide line's `summary`, in the project's shape (src/telemetry/turn-log.ts), for a turn of one round, one model call and one push. */
function summaryOf(f: Figures | undefined, status: number, outcome: string) {
  const tokens = { inputTokens: f?.inputTokens ?? 0, outputTokens: f?.outputTokens ?? 0 };
  return {
    ...(f ? {} : { partial: true }),
    rounds: { count: f ? 1 : 0, outcomes: f ? { answer: 1 } : {}, durationMs: 0 },
    models: {
      calls: f ? 1 : 0,
      models: f ? { primary: 1 } : {},
      outcomes: f ? { ok: 1 } : {},
      fallbacks: 0,
      retries: 0,
      steps: f ? 1 : 0,
      ...tokens,
      durationMs: f?.modelMs ?? 0,
    },
    tools: { calls: 0, tools: {}, outcomes: {}, redacted: 0, durationMs: 0 },
    subtasks: { started: 0, finished: 0, types: {}, outcomes: {} },
    hitl: { asked: 0, answered: 0, expired: 0 },
    compactions: 0,
    pushes: { attempts: 1, outcomes: { [outcome]: 1 }, statuses: { [status]: 1 }, durationMs: 0 },
  };
}

export class ContractCaller extends FloorCaller {
  /** The turns' figures between their model call and their push (an isolate evicted between them writes the line partial). */
  readonly #turns = new Map<string, Figures>();

  constructor(ctx: DurableObjectState, env: ConstructorParameters<typeof FloorCaller>[1]) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS accepted (message_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, text TEXT NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS contexts (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, context_id TEXT NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS entries_by_context ON entries (context_id, id)");
    sql.exec("CREATE TABLE IF NOT EXISTS events (task_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (task_id, seq))");
    sql.exec("CREATE TABLE IF NOT EXISTS turns (task_id TEXT PRIMARY KEY, state TEXT NOT NULL, due INTEGER NOT NULL)");
  }

  /**
   * A retried messageId answers with its task and writes nothing (`null`: its message differs, which the
   * edge refuses); a new one is written with all it implies, in one commit.
   */
  override begin(input: FloorBegin): TaskJson | null {
    const sql = this.ctx.storage.sql;
    const prior = sql
      .exec<{ task: string; text: string }>("SELECT t.task, a.text FROM accepted a JOIN tasks t ON t.id = a.task_id WHERE a.message_id = ?", input.messageId)
      .toArray()[0];
    if (prior) return prior.text === input.text ? (JSON.parse(prior.task) as TaskJson) : null;
    const task = super.begin(input);
    if (!task) return null;
    sql.exec("INSERT INTO accepted (message_id, task_id, text) VALUES (?, ?, ?)", input.messageId, task.id, input.text);
    sql.exec("INSERT OR IGNORE INTO contexts (id, created_at) VALUES (?, ?)", task.contextId, Date.now());
    sql.exec("INSERT INTO entries (context_id, role, text) VALUES (?, 'user', ?)", task.contextId, input.text);
    sql.exec("INSERT INTO events (task_id, seq, event) VALUES (?, 1, ?)", task.id, JSON.stringify({ task }));
    sql.exec("INSERT INTO turns (task_id, state, due) VALUES (?, 'accepted', ?)", task.id, Date.now() + 60_000);
    line("task.accepted", task, { messageId: input.messageId, stream: false, pushConfigs: 1 });
    return task;
  }

  /** The conversation so far, through the `ai` SDK. */
  protected override async answer(task: TaskJson): Promise<string> {
    model ??= createOpenAICompatible({ name: "openai-compatible", baseURL: this.env.OPENAI_BASE_URL ?? "", apiKey: this.env.OPENAI_API_KEY }).chatModel(
      this.env.OPENAI_MODEL ?? "",
    );
    const messages = this.ctx.storage.sql
      .exec<{ role: string; text: string }>("SELECT role, text FROM entries WHERE context_id = ? ORDER BY id", task.contextId)
      .toArray()
      .map((e): ModelMessage => (e.role === "user" ? { role: "user", content: e.text } : { role: "assistant", content: e.text }));
    const started = Date.now();
    const { text, usage } = await generateText({ model, messages, maxRetries: 0 });
    this.#turns.set(task.id, { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0, modelMs: Date.now() - started });
    return text;
  }

  /** In the terminal write's commit: the answer joins the conversation, the event log and the turn record move on. */
  protected override finished(task: TaskJson, answer: string): void {
    const sql = this.ctx.storage.sql;
    sql.exec("INSERT INTO entries (context_id, role, text) VALUES (?, 'assistant', ?)", task.contextId, answer);
    sql.exec("INSERT INTO events (task_id, seq, event) VALUES (?, 2, ?)", task.id, JSON.stringify({ task }));
    sql.exec("UPDATE turns SET state = 'finished' WHERE task_id = ?", task.id);
    const figures = this.#turns.get(task.id);
    if (figures) figures.state = task.status.state;
  }

  /** The push made: the turn record goes, as the project's close does, and the turn's wide line is written. */
  protected override delivered(task: TaskJson, status: number, outcome: string): void {
    this.ctx.storage.sql.exec("DELETE FROM turns WHERE task_id = ?", task.id);
    const figures = this.#turns.get(task.id);
    this.#turns.delete(task.id);
    const tokens = { inputTokens: figures?.inputTokens ?? 0, outputTokens: figures?.outputTokens ?? 0 };
    const summary = summaryOf(figures, status, outcome);
    line("turn.finished", task, { state: figures?.state ?? task.status.state, durationMs: 0, ...tokens, modelCalls: 1, summary });
  }
}
