/**
 * A value built on the first call, then kept. The stores' prepared queries
 * are built this way: an object is rebuilt after every eviction and serves a
 * request with only the statements that request runs, so building them all
 * up front costs more than the request's queries.
 */
export function onFirstUse<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}
