import type { WorkspaceCaps } from "../boundary/subagent.js";
import { WorkspaceLimitError, WorkspacePathError } from "./errors.js";

/**
 * Where a subagent keeps files. Core declares the shape and enforces the caps;
 * a plugin may supply the storage (at most one does), otherwise it is memory.
 */
export interface WorkspaceBacking {
  read(path: string): Promise<string | undefined>;
  write(path: string, content: string): Promise<void>;
  delete(path: string): Promise<void>;
  list(): Promise<Array<{ path: string; bytes: number }>>;
}

/**
 * What a backing is built over: the storage of the object whose workspace it
 * is (a subagent facet's own SQLite). A backing that keeps its files there
 * survives the facet's eviction; memory does not.
 */
export interface WorkspaceHost {
  storage: DurableObjectStorage;
}

export type { WorkspaceCaps };

/** A backing that lives as long as the object holding it. */
export function memoryWorkspaceBacking(): WorkspaceBacking {
  const files = new Map<string, string>();
  return {
    read: async (path) => files.get(path),
    write: async (path, content) => void files.set(path, content),
    delete: async (path) => void files.delete(path),
    list: async () => [...files].map(([path, content]) => ({ path, bytes: utf8Bytes(content) })),
  };
}

const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

/**
 * The workspace an agent actually gets: any backing, behind the caps. A write
 * that would break a cap is refused with a sentence saying which, and writes
 * nothing.
 */
export class Workspace {
  constructor(
    private readonly backing: WorkspaceBacking,
    readonly caps: WorkspaceCaps,
  ) {}

  read(path: string): Promise<string | undefined> {
    return this.backing.read(normalize(path));
  }

  async write(path: string, content: string): Promise<void> {
    const target = normalize(path);
    const bytes = utf8Bytes(content);
    if (bytes > this.caps.maxFileBytes) {
      throw new WorkspaceLimitError(`${target} would be ${bytes} bytes; a workspace file may hold at most ${this.caps.maxFileBytes}`);
    }
    const files = await this.backing.list();
    const existing = files.find((f) => f.path === target);
    if (!existing && files.length >= this.caps.maxFiles) {
      throw new WorkspaceLimitError(`the workspace already holds ${files.length} files, its limit`);
    }
    const total = files.reduce((sum, f) => sum + f.bytes, 0) - (existing?.bytes ?? 0) + bytes;
    if (total > this.caps.maxTotalBytes) {
      throw new WorkspaceLimitError(`writing ${target} would bring the workspace to ${total} bytes; its limit is ${this.caps.maxTotalBytes}`);
    }
    await this.backing.write(target, content);
  }

  delete(path: string): Promise<void> {
    return this.backing.delete(normalize(path));
  }

  list(): Promise<Array<{ path: string; bytes: number }>> {
    return this.backing.list();
  }
}

/** Relative, slash-separated, no `..`: a path names a file inside the workspace and nothing else. */
function normalize(path: string): string {
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.length === 0 || parts.some((p) => p === "..")) {
    throw new WorkspacePathError(`${JSON.stringify(path)} is not a path inside the workspace`);
  }
  return parts.join("/");
}
