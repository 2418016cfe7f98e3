import { definePlugin, type WorkspaceBacking } from "@dynamicagents/core/plugin";

const PREFIX = "workspace:";
const bytesOf = (text: string) => new TextEncoder().encode(text).byteLength;

/**
 * Keeps a subagent's workspace in its own Durable Object storage, so a recipe
 * evicted between chunks finds the files it wrote before. Core enforces the
 * caps; this only stores.
 */
export const durableWorkspacePlugin = () =>
  definePlugin({
    key: "durable-workspace",
    workspaceBacking: ({ storage }): WorkspaceBacking => ({
      read: (path) => storage.get<string>(PREFIX + path),
      write: (path, content) => storage.put(PREFIX + path, content),
      delete: async (path) => void (await storage.delete(PREFIX + path)),
      list: async () =>
        [...(await storage.list<string>({ prefix: PREFIX }))].map(([key, content]) => ({ path: key.slice(PREFIX.length), bytes: bytesOf(content) })),
    }),
  });
