import type { Env as WorkerEnv } from "../src/env.js";

// What `cloudflare:workers` gives the specs: this Worker's bindings and exports.
declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("../src/worker.js");
    }
    interface Env extends WorkerEnv {}
  }
}
