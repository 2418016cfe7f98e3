export { DELEGATE_TOOL, createDelegateTool, type Delegation } from "./delegate-tool.js";
export { subtaskFingerprint } from "./fingerprint.js";
export { redactSubtaskRows, renderSubtaskResults } from "./results.js";
