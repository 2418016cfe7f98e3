// The contract floor's Worker (bench/README.md "Floor"): the floor worker's
// edge and two-step Workflow, with the caller's object doing the contract's work.
export { default, FloorTurn } from "./worker.ts";
export { ContractCaller } from "./contract-caller.ts";
