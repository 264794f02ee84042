import { AcquireGroup, type GroupContext } from './acquire-group.js';
import type { LockAcquisition } from './lock-acquisition.js';
import type { AcquireEachRequest, AcquireEachResult, HeldLock, LockKey, LockRequest, Priority } from './lock-engine.js';
import { keyString } from './lock-key.js';

/** Puts new acquisitions where they wait (and grants the free ones at once). */
export type Placement = (members: readonly LockAcquisition[]) => void;

/** `acquire` of both engines: a group of one. */
export function acquireOne(context: GroupContext, key: LockKey, priority: Priority, request: LockRequest, place: Placement): Promise<HeldLock> {
  return new Promise((resolve, reject) => {
    let failure: Error | null = null;
    const group = new AcquireGroup(
      request,
      {
        granted: resolve,
        failed: (_member, error) => (failure = error),
        // Rejected once the withdrawn request has left the lock service's queue.
        settled: () => {
          if (failure !== null) reject(failure);
        },
      },
      context,
      true,
    );
    // The engine's own copy of the key, as `acquireEach` makes one of each: the lock it waits on keeps it.
    place([group.add({ index: key.index, id: key.id }, priority)]);
    group.arm();
  });
}

/**
 * `acquireEach` of both engines: one group for the distinct keys. A grant whose `onGranted`
 * throws is released at once and reported as failed with that error, so no lock is left behind.
 */
export function acquireEach(
  context: GroupContext,
  keys: readonly LockKey[],
  priority: Priority,
  request: AcquireEachRequest,
  place: Placement,
): Promise<AcquireEachResult> {
  return new Promise((resolve) => {
    const failed = new Map<string, { readonly key: LockKey; readonly error: Error }>();
    const group = new AcquireGroup(
      request,
      {
        granted: (lock) => {
          try {
            request.onGranted(lock);
          } catch (error) {
            void lock.release();
            failed.set(keyString(lock.key), { key: lock.key, error: error instanceof Error ? error : new Error(String(error)) });
          }
        },
        failed: (member, error) => failed.set(keyString(member.key), { key: member.key, error }),
        settled: () => resolve({ failed }),
      },
      context,
    );
    const members = distinct(keys).map((key) => group.add(key, priority));
    if (members.length === 0) {
      resolve({ failed });
      return;
    }
    place(members);
    group.arm();
  });
}

function distinct(keys: readonly LockKey[]): LockKey[] {
  const seen = new Map<string, LockKey>();
  for (const key of keys) {
    const id = keyString(key);
    if (!seen.has(id)) seen.set(id, { index: key.index, id: key.id });
  }
  return [...seen.values()];
}
