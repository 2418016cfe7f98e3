import { runInDurableObject } from "cloudflare:test";

/** The object's side a spec drives by hand: the reconcile pass its schedule runs. */
interface Reconciling {
  reconcileTurns(): Promise<void>;
  listSchedules(): Promise<Array<{ callback: string }>>;
}

const isReconciling = (instance: object): instance is Reconciling => "reconcileTurns" in instance && "listSchedules" in instance;

/**
 * Runs the caller's object's reconcile pass now (as its schedule would, a
 * `reconcileEveryMs` later) and says whether it is still reconciling, i.e.
 * whether any turn is still open there.
 */
export async function reconcileNow(stub: DurableObjectStub<Rpc.DurableObjectBranded & object>): Promise<boolean> {
  return runInDurableObject(stub, async (instance) => {
    if (!isReconciling(instance)) throw new Error("not a caller's object");
    await instance.reconcileTurns();
    return (await instance.listSchedules()).some((s) => s.callback === "reconcileTurns");
  });
}

/** Whether the object has its reconcile schedule armed, without running a pass. */
export async function isReconcilingNow(stub: DurableObjectStub<Rpc.DurableObjectBranded & object>): Promise<boolean> {
  return runInDurableObject(stub, async (instance) => {
    if (!isReconciling(instance)) throw new Error("not a caller's object");
    return (await instance.listSchedules()).some((s) => s.callback === "reconcileTurns");
  });
}
