import type { HeldLock, LockKey, Priority } from '../../src/lock/lock-engine.js';
import { isZkCode } from '../../src/zookeeper-client/zk-errors.js';
import { PRIVATE_LOCK } from '../../src/lock/zookeeper/znode-names.js';
import type { LockZk } from '../../src/lock/zookeeper/session/lock-zk.js';

/**
 * A client of the original algorithm (the Contentserv design, as test/integration/lock's
 * SeedAlgorithmClient speaks it) on the engine's port: a persistent node per document, an
 * `A-`/`B-` EPHEMERAL_SEQUENTIAL entry, all children sorted by name; first in line with no
 * privateLock → create privateLock; otherwise watch the document and look again. Unlock deletes
 * the entry, then privateLock — whoever's it is by then, so no operator may force-release its
 * locks (its unlock would delete the next holder's privateLock). No timeout, no fault handling:
 * it runs on a link that never fails.
 */
export class OriginalClient {
  constructor(
    private readonly zk: LockZk,
    private readonly alive: () => boolean,
  ) {}

  async lock(docPath: string, key: LockKey, priority: Priority): Promise<{ readonly held: HeldLock; readonly unlock: () => Promise<void> }> {
    const created = await this.enter(docPath, priority);
    const mine = created.path.slice(created.path.lastIndexOf('/') + 1);
    const startedAt = Date.now();
    for (;;) {
      let changed!: () => void;
      const parentChanged = new Promise<void>((resolve) => (changed = resolve));
      const children = [...(await this.zk.childrenWatched(docPath, () => changed()))].sort();
      if (children[0] === mine && !children.includes(PRIVATE_LOCK)) {
        try {
          const lock = await this.zk.create(`${docPath}/${PRIVATE_LOCK}`, '', 'ephemeral');
          const held = this.heldLock(key, priority, lock.stat.czxid, startedAt);
          return { held: held.lock, unlock: () => this.unlock(docPath, mine, held.release) };
        } catch (error) {
          if (!isZkCode(error, 'NODEEXISTS')) throw error;
        }
      }
      await parentChanged;
    }
  }

  /** A parent may vanish between its create and the entry's (the reaper, an engine's release of an empty document): make them again. */
  private async enter(docPath: string, priority: Priority): Promise<{ readonly path: string }> {
    for (;;) {
      try {
        await this.createPersistentPath(docPath);
        return await this.zk.create(`${docPath}/${priority === 'foreground' ? 'A' : 'B'}-`, '', 'ephemeralSequential');
      } catch (error) {
        if (!isZkCode(error, 'NONODE')) throw error;
      }
    }
  }

  private async unlock(docPath: string, mine: string, released: () => void): Promise<void> {
    released();
    await this.zk.delete(`${docPath}/${mine}`, -1);
    await this.zk.delete(`${docPath}/${PRIVATE_LOCK}`, -1);
  }

  /** What the checker needs of a grant: usable while the session lives and until unlocked. */
  private heldLock(key: LockKey, priority: Priority, czxid: number, startedAt: number): { lock: HeldLock; release: () => void } {
    let released = false;
    const lost = new AbortController();
    const alive = this.alive;
    const lock: HeldLock = {
      key,
      priority,
      acquiredAt: Date.now(),
      waitMs: Date.now() - startedAt,
      queuePositionOnArrival: 0,
      handedOverLocally: false,
      lost: lost.signal,
      get isLost() {
        return false;
      },
      fencingToken: czxid,
      usable: () => !released && alive(),
      untilUsable: () => Promise.resolve(),
      release: () => Promise.resolve(),
      releaseInBackground: () => undefined,
    };
    return { lock, release: () => (released = true) };
  }

  private async createPersistentPath(docPath: string): Promise<void> {
    let path = '';
    for (const part of docPath.split('/').filter((p) => p !== '')) {
      path += `/${part}`;
      try {
        await this.zk.create(path, '', 'persistent');
      } catch (error) {
        if (!isZkCode(error, 'NODEEXISTS')) throw error;
      }
    }
  }
}
