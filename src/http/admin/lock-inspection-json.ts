import type { LockHolderInfo, LockInspection, LockOwner, LockWaiterInfo } from '../../lock/lock-engine.js';

export interface LockOwnerJson {
  readonly host: string;
  readonly pid: number;
  readonly requestId: string;
}

export interface LockHolderJson {
  readonly owner: LockOwnerJson;
  readonly priority: string;
  readonly since: string;
  readonly message: string;
}

export interface LockWaiterJson {
  readonly priority: string;
  readonly owner: LockOwnerJson | null;
  readonly entry: string;
}

export interface LockInspectionJson {
  readonly key: { readonly index: string; readonly id: string };
  readonly holder: LockHolderJson | null;
  readonly queue: readonly LockWaiterJson[];
}

/** The admin API's view of a lock: times as ISO-8601, absent owners as explicit nulls. */
export function inspectionJson(inspection: LockInspection): LockInspectionJson {
  return {
    key: { index: inspection.key.index, id: inspection.key.id },
    holder: holderJson(inspection.holder),
    queue: inspection.queue.map(waiterJson),
  };
}

export function holderJson(holder: LockHolderInfo | null): LockHolderJson | null {
  if (holder === null) return null;
  return { owner: ownerJson(holder.owner), priority: holder.priority, since: isoTime(holder.since), message: holder.message };
}

function waiterJson(waiter: LockWaiterInfo): LockWaiterJson {
  return { priority: waiter.priority, owner: waiter.owner === undefined ? null : ownerJson(waiter.owner), entry: waiter.entry };
}

function ownerJson(owner: LockOwner): LockOwnerJson {
  return { host: owner.host, pid: owner.pid, requestId: owner.requestId };
}

/** An engine that cannot date a holder (`since` not finite) must not make the answer throw. */
function isoTime(epochMs: number): string {
  return Number.isFinite(epochMs) ? new Date(epochMs).toISOString() : '';
}
