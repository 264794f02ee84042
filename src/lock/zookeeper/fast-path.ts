import type { WatchEventType } from '../zk-client.js';
import { isZkCode } from '../zk-errors.js';
import { type PrefixRanks, queueFromChildren, rankOf } from '../queue-order.js';
import type { ContainerCache, ParentNode } from './containers.js';
import type { LockZk } from './lock-zk.js';
import { type Failure, classifyFailure } from './round-trip.js';

export interface FastPathPlan {
  readonly docPath: string;
  readonly privatePath: string;
  readonly parents: readonly ParentNode[];
  /** Rank of the request the lock is for: entries of this rank or better come first. */
  readonly rank: number;
  readonly data: string;
  /** Holder watch, armed in the same round trip (null: not wanted, e.g. batch grants). */
  readonly onPrivateLockEvent: ((type: WatchEventType) => void) | null;
}

export type FastPathResult =
  | {
      readonly kind: 'held' | 'preceded';
      readonly czxid: number;
      readonly docVersion: number;
      /** The document's children read before our create (the queue at grant time). */
      readonly children: readonly string[];
      readonly watched: boolean;
    }
  | { readonly kind: 'contended' }
  | { readonly kind: 'reaped' }
  | Failure;

/**
 * One pipelined round trip: [create missing containers, getChildren2(doc), create2(privateLock),
 * getData+watch(privateLock)]. ZooKeeper answers a session's requests in order, so the children
 * are read BEFORE our create: an entry of our rank or better in them arrived first and we step
 * back (`preceded`). NODEEXISTS: somebody holds it (`contended`). NONODE: the document container
 * was reaped under us (`reaped`: forget it, retry).
 */
export async function fastPath(zk: LockZk, containers: ContainerCache, prefixes: PrefixRanks, plan: FastPathPlan): Promise<FastPathResult> {
  const parents = containers.ensure(zk, plan.parents);
  const listed = zk.children(plan.docPath);
  const created = zk.create(plan.privatePath, plan.data, 'ephemeral');
  const watched = plan.onPrivateLockEvent === null ? null : zk.getWatched(plan.privatePath, plan.onPrivateLockEvent);
  const [parentsDone, children, mine, watch] = await Promise.allSettled([parents, listed, created, watched]);
  if (mine.status === 'rejected') return createFailed(mine.reason, containers, plan, parentsDone);
  if (children.status === 'rejected') return classifyFailure(children.reason);
  const preceded = queueFromChildren(children.value.children, prefixes).some((entry) => rankOf(entry.prefix, prefixes) <= plan.rank);
  return {
    kind: preceded ? 'preceded' : 'held',
    czxid: mine.value.stat.czxid,
    docVersion: children.value.stat.version,
    children: children.value.children,
    watched: watch.status === 'fulfilled' && watch.value !== null,
  };
}

function createFailed(reason: unknown, containers: ContainerCache, plan: FastPathPlan, parents: PromiseSettledResult<void>): FastPathResult {
  if (isZkCode(reason, 'NODEEXISTS')) return { kind: 'contended' };
  if (isZkCode(reason, 'NONODE')) {
    containers.forget(plan.parents);
    // A parent create that failed for another reason would fail again: report that instead.
    if (parents.status === 'rejected' && !isZkCode(parents.reason, 'NONODE')) return classifyFailure(parents.reason);
    return { kind: 'reaped' };
  }
  return classifyFailure(reason);
}
