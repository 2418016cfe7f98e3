// workerd serves `node:async_hooks` under `nodejs_compat` (wrangler.jsonc). The
// Workers project has no Node types (they clash with the Workers' globals), so
// the one class src/mcp/call-trace.ts uses is declared here.
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, callback: () => R): R;
    getStore(): T | undefined;
  }
}
