import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { isZkCode } from '../../../src/zookeeper-client/zk-errors.js';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';

/** getEphemerals (ZooKeeper 3.6+) through our addon: this session's ephemerals under a path prefix. */
const connect = inject('zookeeperConnect');
const base = `/ephemerals-${randomUUID().slice(0, 8)}`;
let mine: RawZkConnection;
let other: RawZkConnection;

beforeAll(async () => {
  mine = await connectRawClient(connect, 4_000);
  other = await connectRawClient(connect, 4_000);
  for (const path of [base, `${base}/locks`, `${base}/locks/doc`, `${base}/lockside`]) await mine.client.create(path, '', 'persistent');
});

afterAll(async () => {
  await mine?.close();
  await other?.close();
});

it('lists the ephemeral nodes this session owns under a prefix, never another session\'s or a persistent node', async () => {
  await mine.client.create(`${base}/locks/doc/privateLock`, 'x', 'ephemeral');
  const entry = await mine.client.create(`${base}/locks/doc/A-`, 'x', 'ephemeralSequential');
  await other.client.create(`${base}/locks/doc/B-`, 'x', 'ephemeralSequential');
  await mine.client.create(`${base}/lockside/privateLock`, 'x', 'ephemeral');
  expect((await mine.client.getEphemerals(`${base}/locks/`)).sort()).toEqual([entry, `${base}/locks/doc/privateLock`].sort());
  // A string prefix, not a subtree.
  expect(await mine.client.getEphemerals(`${base}/locks`)).toHaveLength(3);
  expect(await mine.client.getEphemerals(`${base}/nothing-here/`)).toEqual([]);
});

it('answers with the paths as the client names them under a chroot', async () => {
  const chrooted = await connectRawClient(`${connect}${base}`, 4_000);
  try {
    await chrooted.client.create('/locks/doc/privateLock-chroot', 'x', 'ephemeral');
    expect(await chrooted.client.getEphemerals('/locks/')).toEqual(['/locks/doc/privateLock-chroot']);
    // Seen from outside the chroot, the same node has its full path.
    await expect(mine.client.get(`${base}/locks/doc/privateLock-chroot`)).resolves.toBeDefined();
  } finally {
    await chrooted.close();
  }
  await expect(mine.client.get(`${base}/locks/doc/privateLock-chroot`)).rejects.toSatisfy((error: unknown) => isZkCode(error, 'NONODE'));
});
