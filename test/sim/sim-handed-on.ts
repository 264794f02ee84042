import type { LockKey } from '../../src/lock/lock-engine.js';
import { documentPath, privateLockPath } from '../../src/lock/zookeeper/znode-names.js';
import type { Actors } from './sim-actors.js';
import type { Ledger } from './sim-ledger.js';
import type { SimRandom } from './sim-random.js';
import type { SimZooKeeper } from './sim-zookeeper.js';
import { type EngineSlot, ROOT } from './sim-world.js';

/**
 * A bulk's key handed on to a single request, its `privateLock` then deleted by hand, on two
 * documents of their own. A bulk of two free, uncontended keys is granted in one transaction
 * with no holder watch (a bulk's keys learn of a deletion at their release); a single request of
 * the same engine comes to wait for the first key and is handed it locally when the bulk
 * releases; an operator deletes that `privateLock` while the single request holds it, longer
 * than the hand-deletion bound. The lock handed on must be watched from the hand-over on
 * (docs/guarantees.md), or the request holds a lock it lost without being told.
 */
export function planHandedOn(
  actors: Actors,
  slots: readonly EngineSlot[],
  keys: readonly [LockKey, LockKey],
  server: SimZooKeeper,
  ledger: Ledger,
  random: SimRandom,
  activeMs: number,
  log: (line: string) => void,
): void {
  const slot = random.pick(slots);
  const start = random.int(0, activeMs - 1_500);
  const bulkHoldMs = random.int(30, 80);
  const singleAfterMs = random.int(1, 20);
  const deleteAfterMs = bulkHoldMs + random.int(30, 200);
  const singleHoldMs = random.int(600, 900);
  setTimeout(() => {
    actors.bulk(slot, keys, 'background', 2_000, bulkHoldMs);
    setTimeout(() => void actors.single(slot, keys[0], 'background', 2_000, singleHoldMs), singleAfterMs);
    setTimeout(() => {
      const node = server.nodes.get(privateLockPath(documentPath(ROOT, keys[0])));
      if (node === undefined) return;
      log(`operator deletes ${node.path} (czxid ${node.czxid}) by hand`);
      server.delete(node.path, -1);
      ledger.deletedByHand(node.czxid, { path: node.path, owner: node.ephemeralOwner, zxid: server.lastZxid() });
    }, deleteAfterMs);
  }, start);
}
