/** A response body with its strong validator, computed once and served many times. */
export interface CachedBody {
  body: string;
  etag: string;
}

/**
 * The validator is a hash of the body, so every isolate serving the same
 * card or JWKS names the same ETag; hono's `etag()` answers the conditional
 * GET from the header set here instead of hashing the body per request.
 */
export async function cachedBody(value: unknown): Promise<CachedBody> {
  const body = JSON.stringify(value);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)));
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { body, etag: `"${hex}"` };
}

export function cachedResponse(cached: CachedBody, maxAgeSeconds: number): Response {
  return new Response(cached.body, {
    status: 200,
    headers: { ETag: cached.etag, "Cache-Control": `public, max-age=${maxAgeSeconds}`, "Content-Type": "application/json" },
  });
}
