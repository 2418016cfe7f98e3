/**
 * The base of every error this package throws on purpose. `code` is a stable
 * string to branch on (as jose's errors do): messages are for people and may
 * change wording in any release, codes never do.
 */
export class DynamicAgentsError extends Error {
  static readonly code: string = "ERR_DYNAMICAGENTS";
  readonly code: string;

  constructor(message: string, options?: ErrorOptions & { code?: string }) {
    super(message, options);
    // `new.target` is the class actually constructed, so a subclass needs no override.
    this.name = new.target.name;
    this.code = options?.code ?? (new.target as typeof DynamicAgentsError).code;
  }
}
