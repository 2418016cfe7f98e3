import type { Env as ReferenceEnv } from "../reference/env.js";

declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("../reference/worker.js");
    }
    interface Env extends ReferenceEnv {}
  }
}
