import { LRUCache } from 'lru-cache';
import { forcedReleasesPath } from './znode-names.js';
import { isZkCode } from '../../zookeeper/zk-errors.js';
import type { LockZk } from './lock-zk.js';

/** A node above the queue: the persistent lock root chain, then index and document containers. */
export interface ParentNode {
  readonly path: string;
  readonly mode: 'persistent' | 'container';
}

/** The persistent nodes of the lock root, outermost first. */
export function rootChain(root: string): ParentNode[] {
  const chain: ParentNode[] = [];
  let path = '';
  for (const part of root.split('/').filter((p) => p !== '')) {
    path += `/${part}`;
    chain.push({ path, mode: 'persistent' });
  }
  return chain;
}

/**
 * The persistent nodes every acquisition needs: the root chain and the forced-release epoch node
 * (created with the first acquisition's requests, ahead of any privateLock of this session).
 */
export function lockRootNodes(root: string): ParentNode[] {
  return [...rootChain(root), { path: forcedReleasesPath(root), mode: 'persistent' }];
}

/** Every node the document node of `docPath`'s key needs first, root first. */
export function parentChain(root: string, index: string, doc: string): ParentNode[] {
  return [...lockRootNodes(root), { path: index, mode: 'container' }, { path: doc, mode: 'container' }];
}
/**
 * Which index/document CONTAINER nodes this process believes exist, so a warm key costs no
 * create. A stale belief (the server reaped an empty container, or another process's release
 * deleted the document node it had created) shows up as NONODE on the child create; the caller
 * then calls `forget` and tries again.
 */
export class ContainerCache {
  /**
   * `true` once created or seen; a promise while our create is in flight (shared, not repeated).
   * The least recently remembered go first; a look-up does not count as a use.
   */
  private readonly known: LRUCache<string, true | Promise<void>>;

  constructor(capacity: number) {
    this.known = new LRUCache({ max: capacity });
  }

  isKnown(path: string): boolean {
    return this.known.peek(path) === true;
  }

  /** Created or seen by us (e.g. in a batch transaction). */
  remember(path: string): void {
    this.known.set(path, true);
  }

  forgetPath(path: string): void {
    this.known.delete(path);
  }

  /**
   * Issues (without awaiting in between) the creates still needed for `nodes`, parent first.
   * Call before queuing the child requests so they are pipelined behind these on the session.
   */
  ensure(zk: LockZk, nodes: readonly ParentNode[]): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const { path, mode } of nodes) {
      const state = this.known.peek(path);
      if (state === true) continue;
      if (state !== undefined) {
        pending.push(state);
        continue;
      }
      const creating = this.createParent(zk, path, mode);
      this.known.set(path, creating);
      pending.push(creating);
    }
    if (pending.length === 0) return Promise.resolve();
    return Promise.all(pending).then(() => undefined);
  }

  forget(nodes: readonly ParentNode[]): void {
    for (const { path, mode } of nodes) if (mode === 'container') this.known.delete(path);
  }

  private async createParent(zk: LockZk, path: string, mode: 'persistent' | 'container'): Promise<void> {
    try {
      await zk.create(path, '', mode);
    } catch (error) {
      if (!isZkCode(error, 'NODEEXISTS')) {
        this.known.delete(path);
        throw error;
      }
    }
    this.remember(path);
  }
}

/** Keys that recently had a holder or a queue: skip the fast path there for a while. */
export class ContentionHints {
  /** The least recently marked go first. */
  private readonly until: LRUCache<string, number>;
  private readonly ttlMs: number;

  constructor(ttlMs: number, capacity: number) {
    this.ttlMs = ttlMs;
    this.until = new LRUCache({ max: capacity });
  }

  mark(docPath: string): void {
    this.until.set(docPath, Date.now() + this.ttlMs);
  }

  contended(docPath: string): boolean {
    const until = this.until.peek(docPath);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.until.delete(docPath);
    return false;
  }
}
