/** A response body with its strong validator, computed once and served many times. */
export interface CachedBody {
  body: string;
  etag: string;
}

export async function cachedBody(value: unknown): Promise<CachedBody> {
  const body = JSON.stringify(value);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)));
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { body, etag: `"${hex}"` };
}

/** RFC 9110 §13.1.2: weak comparison, a list of tags, or `*`. */
export function matchesIfNoneMatch(header: string | null | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  const bare = etag.replace(/^W\//, "");
  return header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === bare);
}

export function serveCached(request: Request, cached: CachedBody, maxAgeSeconds: number): Response {
  const headers = {
    ETag: cached.etag,
    "Cache-Control": `public, max-age=${maxAgeSeconds}`,
    "Content-Type": "application/json",
  };
  if (matchesIfNoneMatch(request.headers.get("If-None-Match"), cached.etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(request.method === "HEAD" ? null : cached.body, { status: 200, headers });
}
