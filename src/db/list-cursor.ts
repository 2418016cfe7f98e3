/** Position after the last task of a page, in list order (newest status first). */
export interface ListCursor {
  statusAt: number;
  id: string;
}

// Keyset cursors stay correct while tasks are added between pages, which an
// offset would not: a new task would shift every later page by one.
export function encodeCursor(cursor: ListCursor): string {
  const bytes = new TextEncoder().encode(JSON.stringify([cursor.statusAt, cursor.id]));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** The cursor a token names, or `undefined` for a token this store never issued. */
export function decodeCursor(token: string): ListCursor | undefined {
  try {
    const base64 = token.replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === "string") {
      return { statusAt: value[0] as number, id: value[1] as string };
    }
  } catch {
    // not one of ours
  }
  return undefined;
}
