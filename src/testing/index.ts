// The test harness agent authors use in their own repos (workerd realm).
// Never imported by a runtime subpath.
export { mockModel, scriptedChoices, type ScriptedReply } from "./mock-model.js";
export { MemorySession as FakeSession } from "../agent/session.js";
