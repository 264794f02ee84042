import { type ZkError, isZkCode } from '../../../zookeeper-client/zk-errors.js';
import { takeOps, tokenOf } from '../ownership/owner-token.js';
import { type PrefixRanks, queueFromChildren, rankOf } from '../../queue-order.js';
import type { ContainerCache, ParentNode } from './containers.js';
import type { LockZk, TxnOutcome, ZkOp } from '../session/lock-zk.js';
import { type Failure, type Unread, classifyFailure, readFailedBesideCreate, refusedBy } from '../session/round-trip.js';

export interface FastPathPlan {
  readonly docPath: string;
  readonly privatePath: string;
  readonly parents: readonly ParentNode[];
  /** Rank of the request the lock is for: entries of this rank or better come first. */
  readonly rank: number;
  readonly data: string;
}

/**
 * `releaseRefused`: one of the release's operations was refused (nothing of the transaction ran).
 * `refusedWhole`: the transaction was refused as a request (THROTTLEDOP, say): the release must
 * still happen, on its own, and the acquisition looks at what it has before going on.
 */
export type FusedResult = FastPathResult | { readonly kind: 'releaseRefused' } | { readonly kind: 'refusedWhole'; readonly error: ZkError };

/**
 * The fast path fused with this process's not yet sent release of the same document:
 * [getChildren2, multi(release operations + create privateLock + bump the document)]. One commit
 * instead of two; the new privateLock is a fresh grant (new czxid). The children are read before
 * the transaction; the entry the release deletes does not count as one ahead of us.
 */
export async function fusedFastPath(
  zk: LockZk,
  prefixes: PrefixRanks,
  plan: FastPathPlan,
  release: { readonly ops: readonly ZkOp[]; readonly entry: string | null },
): Promise<FusedResult> {
  const listed = zk.children(plan.docPath);
  const txn = zk.multi([...release.ops, ...takeOps(plan.docPath, plan.privatePath, plan.data)]);
  const [children, outcome] = await Promise.allSettled([listed, txn]);
  if (outcome.status === 'rejected') {
    const failure = classifyFailure(outcome.reason);
    return failure.kind === 'refused' ? { kind: 'refusedWhole', error: failure.error } : failure;
  }
  if (!outcome.value.ok) return { kind: 'releaseRefused' };
  if (children.status === 'rejected') return readFailedBesideCreate(children.reason);
  const { results } = outcome.value;
  const czxid = results.at(-2)?.stat?.czxid ?? 0;
  const token = tokenOf(results.at(-1));
  const others = children.value.children.filter((child) => child !== release.entry);
  const preceded = queueFromChildren(others, prefixes).some((entry) => rankOf(entry.prefix, prefixes) <= plan.rank);
  return {
    kind: preceded ? 'preceded' : 'held',
    czxid,
    token,
    children: others,
  };
}

export type FastPathResult =
  | {
      readonly kind: 'held' | 'preceded';
      readonly czxid: number;
      /** The document's data version our grant's transaction left (owner-token.ts). */
      readonly token: number;
      /** The document's children read before our create (the queue at grant time). */
      readonly children: readonly string[];
    }
  | { readonly kind: 'contended' }
  | { readonly kind: 'reaped' }
  | Unread
  | Failure;

/**
 * One pipelined round trip: [create missing containers, getChildren2(doc), multi(create
 * privateLock, bump the document)]. ZooKeeper answers a session's requests in order, so the
 * children are read BEFORE our create: an
 * entry of our rank or better in them arrived first and we step back (`preceded`). NODEEXISTS:
 * somebody holds it (`contended`). NONODE: the document container was reaped under us (`reaped`:
 * forget it, retry). No holder watch: a forced release is seen through the forced-release epoch's.
 */
export async function fastPath(zk: LockZk, containers: ContainerCache, prefixes: PrefixRanks, plan: FastPathPlan): Promise<FastPathResult> {
  const parents = containers.ensure(zk, plan.parents);
  const listed = zk.children(plan.docPath);
  const taken = zk.multi(takeOps(plan.docPath, plan.privatePath, plan.data));
  const [parentsDone, children, mine] = await Promise.allSettled([parents, listed, taken]);
  if (mine.status === 'rejected') return classifyFailure(mine.reason);
  if (!mine.value.ok) return createRefused(mine.value, containers, plan, parentsDone);
  if (children.status === 'rejected') return readFailedBesideCreate(children.reason);
  const preceded = queueFromChildren(children.value.children, prefixes).some((entry) => rankOf(entry.prefix, prefixes) <= plan.rank);
  return {
    kind: preceded ? 'preceded' : 'held',
    czxid: mine.value.results[0]?.stat?.czxid ?? 0,
    token: tokenOf(mine.value.results[1]),
    children: children.value.children,
  };
}

function createRefused(
  refused: Extract<TxnOutcome, { ok: false }>,
  containers: ContainerCache,
  plan: FastPathPlan,
  parents: PromiseSettledResult<void>,
): FastPathResult {
  if (refused.code === 'NODEEXISTS') return { kind: 'contended' };
  if (refused.code === 'NONODE') {
    containers.forget(plan.parents);
    // A parent create that failed for another reason would fail again: report that instead.
    if (parents.status === 'rejected' && !isZkCode(parents.reason, 'NONODE')) return classifyFailure(parents.reason);
    return { kind: 'reaped' };
  }
  return refusedBy(refused.code);
}
