import { definePlugin } from "@dynamicagents/core/plugin";
import { tool } from "ai";
import { z } from "zod";

// A schema defined once is converted to JSON Schema once per isolate, not per turn (docs/tools.md).
const saveNoteInput = z.object({ text: z.string().min(1).max(2000).describe("the note") });
const listNotesInput = z.object({});
const DDL = "CREATE TABLE IF NOT EXISTS notes_items (id TEXT PRIMARY KEY, text TEXT NOT NULL, created_at INTEGER NOT NULL)";

/**
 * Notes the assistant keeps for its caller, in a table of the caller's own
 * object. Saving one is a side effect the user approves first (the tool
 * `needsApproval`); reading them is not.
 */
export const notesPlugin = (storage: DurableObjectStorage) =>
  definePlugin({
    key: "notes",
    capability: "You can keep notes for the user with save_note (they approve each one first) and read them back with list_notes.",
    store: { plugin: "notes", version: 1, ensureTables: (sql) => sql.exec(DDL) },
    toolFamilies: {
      notes: () => ({
        tools: {
          save_note: tool({
            description: "Saves a note for the user. The user is asked to approve it first.",
            inputSchema: saveNoteInput,
            needsApproval: true,
            execute: async ({ text }) => {
              const id = crypto.randomUUID();
              storage.sql.exec("INSERT INTO notes_items (id, text, created_at) VALUES (?, ?, ?)", id, text, Date.now());
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
