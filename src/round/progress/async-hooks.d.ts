// workerd serves node:async_hooks (the Worker's nodejs_compat flag), which
// the Workers types do not declare: the part of it a tool call's context uses.
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, fn: () => R): R;
    getStore(): T | undefined;
  }
}
