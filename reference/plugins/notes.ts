import { definePlugin, type ErasureScope } from "@dynamicagents/core/plugin";
import { tool } from "ai";
import { z } from "zod";

// A schema defined once is converted to JSON Schema once per isolate, not per turn (docs/tools.md).
const saveNoteInput = z.object({ text: z.string().min(1).max(2000).describe("the note") });
const listNotesInput = z.object({});
const DDL = "CREATE TABLE IF NOT EXISTS notes_items (id TEXT PRIMARY KEY, text TEXT NOT NULL, created_at INTEGER NOT NULL, context_id TEXT, task_id TEXT)";

/**
 * Deletes the notes of an erased context (each note records the context and
 * task it was saved in), or every note of an erased caller; how many went
 * (docs/retention.md "What a plugin author does").
 */
function eraseNotes(sql: SqlStorage, scope: ErasureScope): number {
  const gone = (query: string, ...bindings: string[]) => sql.exec(`${query} RETURNING id`, ...bindings).toArray().length;
  if (scope.kind === "caller") return gone("DELETE FROM notes_items");
  let erased = gone("DELETE FROM notes_items WHERE context_id = ?", scope.contextId);
  for (const taskId of scope.taskIds) erased += gone("DELETE FROM notes_items WHERE task_id = ?", taskId);
  return erased;
}

/**
 * Notes the assistant keeps for its caller, in a table of the caller's own
 * object. Saving one is a side effect the user approves first (the tool
 * `needsApproval`); reading them is not. Erasing a context erases the notes
 * saved in it.
 */
export const notesPlugin = (storage: DurableObjectStorage) =>
  definePlugin({
    key: "notes",
    capability: "You can keep notes for the user with save_note (they approve each one first) and read them back with list_notes.",
    store: {
      plugin: "notes",
      version: 2,
      ensureTables: (sql, fromVersion) => {
        sql.exec(DDL);
        // Version 1 kept no context: its notes stay until the caller's erasure.
        if (fromVersion === 1) {
          sql.exec("ALTER TABLE notes_items ADD COLUMN context_id TEXT");
          sql.exec("ALTER TABLE notes_items ADD COLUMN task_id TEXT");
        }
      },
      erase: eraseNotes,
    },
    toolFamilies: {
      notes: (context) => ({
        tools: {
          save_note: tool({
            description: "Saves a note for the user. The user is asked to approve it first.",
            inputSchema: saveNoteInput,
            needsApproval: true,
            execute: async ({ text }) => {
              const id = crypto.randomUUID();
              storage.sql.exec(
                "INSERT INTO notes_items (id, text, created_at, context_id, task_id) VALUES (?, ?, ?, ?, ?)",
                id,
                text,
                Date.now(),
                context.contextId,
                context.taskId,
              );
              return { saved: text, id };
            },
          }),
          list_notes: tool({
            description: "Lists the notes saved for the user, newest first.",
            inputSchema: listNotesInput,
            execute: async () => ({
              notes: storage.sql
                .exec<{ text: string }>("SELECT text FROM notes_items ORDER BY created_at DESC LIMIT 50")
                .toArray()
                .map((row) => row.text),
            }),
          }),
        },
      }),
    },
  });
