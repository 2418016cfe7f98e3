import { SelfOriginUnknown } from "./errors.js";

/**
 * This deployment's own origin as a Durable Object learns it: from the first
 * turn it serves (the edge computed it from the request URL), then pinned.
 * Pinned rather than overwritten because turns run concurrently in one
 * object and a credential helper may read it several frames below the turn
 * that set it; nothing is persisted, and a new isolate learns it again.
 */
export class SelfOrigin {
  #origin: string | undefined;

  learn(origin: string): void {
    if (this.#origin === undefined) this.#origin = new URL(origin).origin;
  }

  get(): string | undefined {
    return this.#origin;
  }

  require(): string {
    if (this.#origin === undefined) {
      throw new SelfOriginUnknown(
        "requireSelfOrigin(): this deployment's origin is learned from the first turn this object serves, " +
          "and none has arrived yet. It is unknown in a constructor, in onStart and in alarms that run before any turn; " +
          "call it inside a turn instead.",
      );
    }
    return this.#origin;
  }
}
