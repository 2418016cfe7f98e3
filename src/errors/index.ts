// Errors with stable codes; a leaf: imports nothing of this package.
export { ConfigError, type ConfigCulprit, type ConfigErrorCode, type ConfigErrorCodes } from "./config-error.js";
export { DynamicAgentsError } from "./dynamic-agents-error.js";
