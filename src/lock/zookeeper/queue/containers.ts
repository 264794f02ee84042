import { LRUCache } from 'lru-cache';
import { forcedReleasesPath } from '../znode-names.js';
import { isZkCode } from '../../../zookeeper-client/zk-errors.js';
import type { LockZk } from '../session/lock-zk.js';

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

/** One sighting of a node: compared by identity, it tells a belief from a newer one of the same path. */
export class Sighting {}

/**
 * Which index/document CONTAINER nodes this process believes exist, so a warm key costs no
 * create. A stale belief (the server reaped an empty container, or another process's release
 * deleted the document node it had created) shows up as NONODE on the child create; the caller
 * then calls `forget` and tries again.
 */
export class ContainerCache {
  /**
   * A sighting once created or seen; a promise while our create is in flight (shared, not repeated).
   * The least recently remembered go first; a look-up does not count as a use.
   */
  private readonly known: LRUCache<string, Sighting | Promise<void>>;

  constructor(capacity: number) {
    this.known = new LRUCache({ max: capacity });
  }

  isKnown(path: string): boolean {
    return this.known.peek(path) instanceof Sighting;
  }

  /**
   * What this process believes of `path` now, to hand to `forgetSighting` if a request planned on
   * that belief is refused; undefined when it is not known to exist.
   */
  sighting(path: string): Sighting | undefined {
    const state = this.known.peek(path);
    return state instanceof Sighting ? state : undefined;
  }

  /** Created or seen by us (e.g. in a batch transaction). */
  remember(path: string): void {
    this.known.set(path, new Sighting());
  }

  forgetPath(path: string): void {
    this.known.delete(path);
  }

  /**
   * `path` was gone when a request planned on `stale` (a sighting of it) reached the server:
   * forgets it, so that the next `ensure` creates it again — once for every request refused on
   * the same sighting. Requests in flight together are refused together; the first refusal
   * forgets the sighting, and the others find the create it led to pending (or done) and share
   * it instead of racing it.
   */
  forgetSighting(path: string, stale: Sighting): void {
    if (this.known.peek(path) === stale) this.known.delete(path);
  }

  /**
   * Marks `path` as being created by the caller's transaction, so that `ensure` and `pending` wait
   * for its answer instead of racing it; the caller settles it with that answer. Undefined when
   * `path` is known or already being created.
   */
  claim(path: string): ((created: boolean) => void) | undefined {
    if (this.known.peek(path) !== undefined) return undefined;
    let answered = (): void => undefined;
    const creating = new Promise<void>((resolve) => (answered = resolve));
    this.known.set(path, creating);
    return (created) => {
      if (this.known.peek(path) === creating) {
        if (created) this.remember(path);
        else this.known.delete(path);
      }
      answered();
    };
  }

  /** The create of `path` on its way (ours or a transaction's), if any; it may reject. */
  pending(path: string): Promise<void> | undefined {
    const state = this.known.peek(path);
    return state instanceof Promise ? state : undefined;
  }

  /**
   * Issues (without awaiting in between) the creates still needed for `nodes`, parent first.
   * Call before queuing the child requests so they are pipelined behind these on the session.
   */
  ensure(zk: LockZk, nodes: readonly ParentNode[]): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const { path, mode } of nodes) {
      const state = this.known.peek(path);
      if (state instanceof Sighting) continue;
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
