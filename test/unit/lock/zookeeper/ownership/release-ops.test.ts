import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ContainerCache } from '../../../../../src/lock/zookeeper/queue/containers.js';
import { ForcedReleaseEpoch } from '../../../../../src/lock/zookeeper/ownership/forced-release-epoch.js';
import { opCount, opsOf, type PendingRelease, type ReleaseItem, ReleaseTxn } from '../../../../../src/lock/zookeeper/ownership/release-item.js';

/** A release's operations, and the count that sizes a batch's transactions without building them. */
describe('release operations', () => {
  const epoch = new ForcedReleaseEpoch('/root', new ContainerCache(10), pino({ level: 'silent' }), () => undefined);
  const items: ReleaseItem[] = [];
  for (const privateLock of [null, { czxid: 7, token: 2, epoch: 1 }])
    for (const entry of [null, 'fg-0000000003'])
      for (const deleteDocument of [false, true]) items.push({ docPath: '/root/i/d', generation: 1, privateLock, entry, deleteDocument });

  it('counts exactly the operations opsOf gives, for every kind of release', () => {
    expect(items.map(opCount)).toEqual(items.map((item) => opsOf(item, epoch).length));
  });

  it('deletes a document it created instead of checking its version, and never without our privateLock', () => {
    const roles = (item: ReleaseItem): string[] => opsOf(item, epoch).map((op) => op.role);
    const lock = { czxid: 7, token: 2, epoch: 1 };
    expect(roles({ docPath: '/d', generation: 1, privateLock: lock, entry: null, deleteDocument: true })).toEqual(['epoch', 'lock', 'document']);
    expect(roles({ docPath: '/d', generation: 1, privateLock: lock, entry: 'e', deleteDocument: false })).toEqual(['check', 'epoch', 'lock', 'entry']);
    expect(roles({ docPath: '/d', generation: 1, privateLock: null, entry: 'e', deleteDocument: true })).toEqual(['entry']);
  });

  it('checks each forced-release epoch once per transaction, and names the release and role of every operation', () => {
    const pending = (docPath: string, epochRead: number): PendingRelease => ({
      item: { docPath, generation: 1, privateLock: { czxid: 7, token: 0, epoch: epochRead }, entry: null, deleteDocument: true },
      done: () => undefined,
    });
    const [a, b, c] = [pending('/r/i/a', 1), pending('/r/i/b', 1), pending('/r/i/c', 2)];
    const txn = new ReleaseTxn();
    for (const release of [a, b, c]) txn.add(release, epoch);
    expect(txn.ops.map((op) => `${op.type} ${op.path}`)).toEqual([
      `check ${epoch.checkOp(1).path}`,
      'delete /r/i/a/privateLock',
      'delete /r/i/a',
      'delete /r/i/b/privateLock',
      'delete /r/i/b',
      `check ${epoch.checkOp(2).path}`,
      'delete /r/i/c/privateLock',
      'delete /r/i/c',
    ]);
    expect(txn.ops.filter((op) => op.type === 'check').map((op) => (op.type === 'check' ? op.version : null))).toEqual([1, 2]);
    expect(txn.owners).toEqual([a, a, a, b, b, c, c, c]);
    expect(txn.roles).toEqual(['epoch', 'lock', 'document', 'lock', 'document', 'epoch', 'lock', 'document']);
  });
});
