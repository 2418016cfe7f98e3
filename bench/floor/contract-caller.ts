// The floor with the contract's work (bench/README.md "Floor"): the floor
// worker's caller object plus, in the least code, what docs/protocol.md,
// docs/conversations.md and docs/telemetry.md ask of every turn and the
// issue's floor leaves out:
// idempotency by messageId, one conversation per contextId (read for the
// model, appended to), a persisted event log with `seq`, a turn record the
// delivery clears (what recovery reads), the model through the `ai` SDK, and
// one JSON log line per event (six a turn). Raw SQL, no plugins, no quotas.
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

export class ContractCaller extends FloorCaller {
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
    // `= +?` in its reads, as the project's stores have it (src/db/eq-param.ts): no statement compiled again at each call.
    const prior = sql
      .exec<{ task: string; text: string }>("SELECT t.task, a.text FROM accepted a JOIN tasks t ON t.id = a.task_id WHERE a.message_id = +?", input.messageId)
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
      .exec<{ role: string; text: string }>("SELECT role, text FROM entries WHERE context_id = +? ORDER BY id", task.contextId)
      .toArray()
      .map((e): ModelMessage => (e.role === "user" ? { role: "user", content: e.text } : { role: "assistant", content: e.text }));
    line("turn.started", task, { instanceId: task.id });
    const started = Date.now();
    const { text, usage } = await generateText({ model, messages, maxRetries: 0 });
    const tokens = { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 };
    line("model.call", task, { round: 1, model: "primary", fallback: false, retries: 0, outcome: "ok", steps: 1, ...tokens, durationMs: Date.now() - started });
    return text;
  }

  /** In the terminal write's commit: the answer joins the conversation, the event log and the turn record move on. */
  protected override finished(task: TaskJson, answer: string): void {
    const sql = this.ctx.storage.sql;
    sql.exec("INSERT INTO entries (context_id, role, text) VALUES (?, 'assistant', ?)", task.contextId, answer);
    sql.exec("INSERT INTO events (task_id, seq, event) VALUES (?, 2, ?)", task.id, JSON.stringify({ task }));
    sql.exec("UPDATE turns SET state = 'finished' WHERE task_id = ?", task.id);
    line("round.finished", task, { round: 1, outcome: "answer", durationMs: 0 });
    line("turn.finished", task, { state: task.status.state, durationMs: 0, modelCalls: 1 });
  }

  /** The push made: the turn record goes, as the project's close does. */
  protected override delivered(task: TaskJson, status: number, outcome: string): void {
    this.ctx.storage.sql.exec("DELETE FROM turns WHERE task_id = ?", task.id);
    line("push.attempt", task, { configId: "push", seq: 2, attempt: 1, status, outcome, durationMs: 0 });
  }
}
