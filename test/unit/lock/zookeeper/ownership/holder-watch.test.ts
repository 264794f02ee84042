import { describe, expect, it } from 'vitest';
import { HolderWatch } from '../../../../../src/lock/zookeeper/ownership/holder-watch.js';
import { awaitsListing, type PendingRelease } from '../../../../../src/lock/zookeeper/ownership/release-item.js';
import type { Connection } from '../../../../../src/lock/zookeeper/session/connection.js';
import type { NodeStat } from '../../../../../src/lock/zookeeper/session/lock-zk.js';
import type { WatchEventType } from '../../../../../src/zookeeper-client/zk-client.js';

const OUR_CZXID = 24;

/** One link whose exists calls the test answers by hand, and whose watch events it fires. */
function scriptedLink() {
  const reads: { readonly answer: (stat: NodeStat | null) => void; readonly fire: (type: WatchEventType) => void }[] = [];
  const zk = {
    existsWatched(_path: string, onEvent: (type: WatchEventType) => void): Promise<NodeStat | null> {
      return new Promise((resolve) => reads.push({ answer: resolve, fire: onEvent }));
    },
  };
  const connection = { current: () => ({ generation: 1, zk }) } as unknown as Connection;
  return { connection, reads };
}

const stat = (czxid: number) => ({ czxid }) as NodeStat;
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('HolderWatch', () => {
  it('vouches for its privateLock once the read after a "changed" event finds the same node', async () => {
    const { connection, reads } = scriptedLink();
    const watch = new HolderWatch(connection, '/locks/docs/d0/privateLock', OUR_CZXID, 1, () => undefined);
    watch.arm();
    reads[0]!.answer(stat(OUR_CZXID));
    await settled();
    expect(watch.unsure()).toBe(false);

    // After a reconnect, a node deleted and created again fires "changed": the node may be the next holder's.
    reads[0]!.fire('changed');
    expect(watch.unsure()).toBe(true);
    expect(reads).toHaveLength(2);
    reads[1]!.answer(stat(OUR_CZXID));
    await settled();
    expect(watch.unsure()).toBe(false);
    expect(watch.gone()).toBe(false);
  });

  it('is gone when the read after a "changed" event finds another node', async () => {
    const { connection, reads } = scriptedLink();
    let lost = 0;
    const watch = new HolderWatch(connection, '/locks/docs/d0/privateLock', OUR_CZXID, 1, () => lost++);
    watch.arm();
    reads[0]!.answer(stat(OUR_CZXID));
    await settled();
    reads[0]!.fire('changed');
    reads[1]!.answer(stat(OUR_CZXID + 5));
    await settled();
    expect(watch.gone()).toBe(true);
    expect(watch.unsure()).toBe(false);
    expect(lost).toBe(1);
  });

  it('vouches for nothing until its first read answers: the read may wait behind others, and the node go meanwhile', async () => {
    const { connection, reads } = scriptedLink();
    const watch = new HolderWatch(connection, '/locks/docs/d0/privateLock', OUR_CZXID, 1, () => undefined);
    watch.arm();
    expect(watch.unsure()).toBe(true);
    let sure = false;
    void watch.whenSure().then(() => (sure = true));
    await settled();
    expect(sure).toBe(false);
    reads[0]!.answer(stat(OUR_CZXID));
    await settled();
    expect(sure).toBe(true);
    expect(watch.unsure()).toBe(false);
    expect(watch.gone()).toBe(false);
  });

  it('is gone, and sure of it, when its first read finds no node', async () => {
    const { connection, reads } = scriptedLink();
    const watch = new HolderWatch(connection, '/locks/docs/d0/privateLock', OUR_CZXID, 1, () => undefined);
    watch.arm();
    const sure = watch.whenSure();
    reads[0]!.answer(null);
    await sure;
    expect(watch.gone()).toBe(true);
    expect(watch.unsure()).toBe(false);
  });
});

describe('HolderWatch after its session ended', () => {
  it('is sure at once: nothing of the session is left to vouch for, and nobody waits on it', async () => {
    const zk = { existsWatched: () => new Promise<NodeStat | null>(() => undefined) };
    let generation = 1;
    const connection = { current: () => ({ generation, zk }) } as unknown as Connection;
    const watch = new HolderWatch(connection, '/locks/docs/d0/privateLock', OUR_CZXID, 1, () => undefined);
    generation = 2;
    watch.arm();
    expect(watch.unsure()).toBe(false);
    await watch.whenSure();
  });
});

describe('awaitsListing', () => {
  const pending = (privateLock: PendingRelease['item']['privateLock']): PendingRelease => ({
    item: { docPath: '/locks/docs/d0', generation: 1, privateLock, entry: null, deleteDocument: false },
    done: () => undefined,
  });

  it('makes a release list the session\'s nodes while its holder watch re-reads privateLock', () => {
    let unsure = true;
    const release = pending({ czxid: OUR_CZXID, token: 1, epoch: 0, gone: () => false, unsure: () => unsure });
    expect(awaitsListing(release)).toBe(true);
    unsure = false;
    expect(awaitsListing(release)).toBe(false);
  });
});
