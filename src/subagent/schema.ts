import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The one subtask this subagent runs (a subagent is named after its subtask). */
export const recipeRun = sqliteTable("recipe_run", {
  id: integer("id").primaryKey(),
  fingerprint: text("fingerprint").notNull(),
  /** running | done | failed | canceled */
  status: text("status").notNull(),
  resultJson: text("result_json"),
  error: text("error"),
  cancelRequested: integer("cancel_requested").notNull().default(0),
});

/** Finished chunks of the recipe: a resumed run takes their results instead of running them again. */
export const recipeChunks = sqliteTable("recipe_chunks", {
  name: text("name").primaryKey(),
  resultJson: text("result_json").notNull(),
  finishedAt: integer("finished_at").notNull(),
});

/** Answers to the recipe's questions, recorded by the parent: a resumed run's `ask` returns them. */
export const recipeAnswers = sqliteTable("recipe_answers", {
  name: text("name").primaryKey(),
  answerJson: text("answer_json").notNull(),
  answeredAt: integer("answered_at").notNull(),
});

/** The recipe's model calls (`RecipeContext.generate`), each recorded as it ends: what the parent counts, and what the subtask's budget holds. */
export const recipeCalls = sqliteTable("recipe_calls", {
  seq: integer("seq").primaryKey(),
  model: text("model").notNull(),
  fallback: integer("fallback", { mode: "boolean" }).notNull(),
  retries: integer("retries").notNull(),
  /** ok | error | aborted */
  outcome: text("outcome").$type<"ok" | "error" | "aborted">().notNull(),
  steps: integer("steps").notNull(),
  inputTokens: integer("input_tokens").notNull(),
  outputTokens: integer("output_tokens").notNull(),
  durationMs: integer("duration_ms").notNull(),
});

// Idempotent, run at every start of the facet: a subagent's database is its own
// and holds only these tables, so no migration journal is needed.
export const SUBAGENT_DDL = [
  `CREATE TABLE IF NOT EXISTS recipe_run (id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL, status TEXT NOT NULL, result_json TEXT, error TEXT, cancel_requested INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE IF NOT EXISTS recipe_chunks (name TEXT PRIMARY KEY, result_json TEXT NOT NULL, finished_at INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS recipe_answers (name TEXT PRIMARY KEY, answer_json TEXT NOT NULL, answered_at INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS recipe_calls (seq INTEGER PRIMARY KEY, model TEXT NOT NULL, fallback INTEGER NOT NULL, retries INTEGER NOT NULL, outcome TEXT NOT NULL, steps INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, duration_ms INTEGER NOT NULL)`,
];
