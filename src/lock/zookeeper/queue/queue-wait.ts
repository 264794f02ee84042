import { isZkCode } from '../../../zookeeper-client/zk-errors.js';
import { takeOps, tokenOf } from '../ownership/owner-token.js';
import { type PrefixRanks, type QueueEntry, queueFromChildren } from '../../queue-order.js';
import { PRIVATE_LOCK } from '../znode-names.js';
import type { ContainerCache, ParentNode } from './containers.js';
import type { LockZk } from '../session/lock-zk.js';
import { type Failure, type Unread, classifyFailure, readFailedBesideCreate, refusedBy } from '../session/round-trip.js';

/**
 * The queue path (the original algorithm's, with Curator's refinements): an
 * EPHEMERAL_SEQUENTIAL entry `<prefix>-<seq>`, ordered by (prefix rank, sequence); the head
 * takes `privateLock` when it is free; everybody else watches only its predecessor.
 */
export interface QueueRead {
  readonly children: readonly string[];
  /**
   * The document node's czxid at the read. A node reaped and created again starts its sequence
   * counter over, so an entry of ours made in an older node may share its name with somebody
   * else's entry in this one: the czxid tells them apart (cohort-nodes.ts `observed`).
   */
  readonly docCzxid: number;
}

export type EnterResult = ({ readonly kind: 'queued'; readonly entry: string; readonly entryCzxid: number } & QueueRead) | { readonly kind: 'reaped' } | Unread | Failure;

/** [create containers, create(entry), getChildren2] in one round trip; the entry is in the children. */
export async function enterQueue(
  zk: LockZk,
  containers: ContainerCache,
  plan: { readonly docPath: string; readonly parents: readonly ParentNode[]; readonly prefix: string; readonly data: string },
): Promise<EnterResult> {
  const parents = containers.ensure(zk, plan.parents);
  const created = zk.create(`${plan.docPath}/${plan.prefix}-`, plan.data, 'ephemeralSequential');
  const listed = zk.children(plan.docPath);
  const [parentsDone, entry, children] = await Promise.allSettled([parents, created, listed]);
  if (entry.status === 'rejected') {
    if (!isZkCode(entry.reason, 'NONODE')) return classifyFailure(entry.reason);
    containers.forget(plan.parents);
    if (parentsDone.status === 'rejected' && !isZkCode(parentsDone.reason, 'NONODE')) return classifyFailure(parentsDone.reason);
    return { kind: 'reaped' };
  }
  if (children.status === 'rejected') return readFailedBesideCreate(children.reason);
  return { kind: 'queued', entry: lastSegment(entry.value.path), entryCzxid: entry.value.stat.czxid, children: children.value.children, docCzxid: children.value.stat.czxid };
}

export type ReadResult = ({ readonly kind: 'read' } & QueueRead) | { readonly kind: 'reaped' } | Failure;

export async function readQueue(zk: LockZk, docPath: string): Promise<ReadResult> {
  try {
    const read = await zk.children(docPath);
    return { kind: 'read', children: read.children, docCzxid: read.stat.czxid };
  } catch (error) {
    if (isZkCode(error, 'NONODE')) return { kind: 'reaped' };
    return classifyFailure(error);
  }
}

export type ArbitrateResult =
  | ({ readonly kind: 'created'; readonly czxid: number; readonly token: number } & QueueRead)
  | ({ readonly kind: 'taken' } & QueueRead)
  | { readonly kind: 'reaped' }
  | Unread
  | Failure;

/**
 * The head (or likely head) tries the mutex: [getChildren2, multi(create privateLock, bump the
 * document)]. The children are read before the create: the caller steps back if they show somebody
 * ahead. `taken`: wait for the holder's privateLock. No holder watch: a forced release is seen
 * through the forced-release epoch's.
 */
export async function arbitrate(
  zk: LockZk,
  plan: { readonly docPath: string; readonly privatePath: string; readonly data: string },
): Promise<ArbitrateResult> {
  const listed = zk.children(plan.docPath);
  const taken = zk.multi(takeOps(plan.docPath, plan.privatePath, plan.data));
  const [children, mine] = await Promise.allSettled([listed, taken]);
  if (mine.status === 'rejected') return classifyFailure(mine.reason);
  if (!mine.value.ok && mine.value.code !== 'NODEEXISTS') return mine.value.code === 'NONODE' ? { kind: 'reaped' } : refusedBy(mine.value.code);
  if (children.status === 'rejected') {
    // The document was gone at the read and had a privateLock again at the create: reaped and
    // created anew by another process in between, with our queue entry gone with it.
    if (!mine.value.ok && isZkCode(children.reason, 'NONODE')) return { kind: 'reaped' };
    return mine.value.ok ? readFailedBesideCreate(children.reason) : classifyFailure(children.reason);
  }
  const read = { children: children.value.children, docCzxid: children.value.stat.czxid };
  if (!mine.value.ok) return { kind: 'taken', ...read };
  return { kind: 'created', czxid: mine.value.results[0]?.stat?.czxid ?? 0, token: tokenOf(mine.value.results[1]), ...read };
}

/** Where our entry stands in a children list. */
export interface QueueView {
  /** -1: our entry is not there (deleted under us). */
  readonly position: number;
  /** Entries served before ours, in order. */
  readonly ahead: readonly QueueEntry[];
  readonly privateLockTaken: boolean;
}

export function viewQueue(children: readonly string[], entry: string, prefixes: PrefixRanks): QueueView {
  const queue = queueFromChildren(children, prefixes);
  const position = queue.findIndex((e) => e.name === entry);
  return { position, ahead: position < 0 ? [] : queue.slice(0, position), privateLockTaken: children.includes(PRIVATE_LOCK) };
}

export function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
