import type { LockKey } from '../../src/lock/lock-engine.js';
import { keyString } from '../../src/lock/lock-key.js';
import { PRIVATE_LOCK, documentPath, privateLockPath } from '../../src/lock/zookeeper/znode-names.js';
import type { Ledger } from './sim-ledger.js';
import type { SimRandom } from './sim-random.js';
import type { SimZooKeeper } from './sim-zookeeper.js';
import type { VirtualClock } from './virtual-clock.js';
import { type EngineSlot, ROOT } from './sim-world.js';

/**
 * An operator at a zkCli and the admin port: deletes a `privateLock` by hand (mostly one somebody
 * holds), deletes a waiter's queue entry by hand, or force-releases through an engine's admin
 * path — at moments drawn by the seed, during the active phase. Never in runs with a client of
 * the original algorithm (its unlock deletes whatever `privateLock` is there).
 */
export function planOperator(
  slots: readonly EngineSlot[],
  keys: readonly LockKey[],
  server: SimZooKeeper,
  ledger: Ledger,
  random: SimRandom,
  clock: VirtualClock,
  activeMs: number,
  log: (line: string) => void,
): void {
  const actions = random.int(1, 4);
  for (let i = 0; i < actions; i++) {
    const at = random.int(0, activeMs);
    const kind = random.pick(['deletePrivateLock', 'deletePrivateLock', 'deleteEntry', 'forceRelease'] as const);
    const choice = random.uint32();
    clock.schedule(() => {
      const held = keys.filter((key) => ledger.holds(keyString(key)));
      const pool = held.length > 0 ? held : keys;
      const key = pool[choice % pool.length];
      if (key === undefined) return;
      const docPath = documentPath(ROOT, key);
      if (kind === 'deletePrivateLock') {
        const node = server.nodes.get(privateLockPath(docPath));
        if (node === undefined) return;
        log(`operator deletes ${node.path} (czxid ${node.czxid}) by hand`);
        server.delete(node.path, -1);
        ledger.deletedByHand(node.czxid, { path: node.path, owner: node.ephemeralOwner, zxid: server.lastZxid() });
      } else if (kind === 'deleteEntry') {
        const entries = [...(server.nodes.get(docPath)?.children ?? [])].filter((name) => name !== PRIVATE_LOCK);
        const name = entries[choice % Math.max(1, entries.length)];
        if (name === undefined) return;
        log(`operator deletes ${docPath}/${name} by hand`);
        const entry = server.nodes.get(`${docPath}/${name}`);
        ledger.entryDeletedByHand(entry?.czxid ?? 0, { path: `${docPath}/${name}`, owner: entry?.ephemeralOwner ?? '0' });
        server.delete(`${docPath}/${name}`, -1);
      } else {
        const slot = slots[choice % slots.length];
        if (slot === undefined || slot.engine.state() === 'closed') return;
        log(`operator e${slot.index} force-releases ${keyString(key)}`);
        slot.engine.forceRelease(key).then(
          (forced) => log(`operator e${slot.index} force-release ${keyString(key)}: ${forced}`),
          (error: unknown) => log(`operator e${slot.index} force-release ${keyString(key)} failed: ${String(error)}`),
        );
      }
    }, at);
  }
}
