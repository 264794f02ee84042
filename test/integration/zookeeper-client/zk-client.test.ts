import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newStats } from '../../../src/lock/lock-stats.js';
import { ZkClient } from '../../../src/zookeeper-client/zk-client.js';
import { isZkCode } from '../../../src/zookeeper-client/zk-errors.js';
import { ZkMultiError } from '../../../src/zookeeper-client/zk-multi.js';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { type ZooKeeperCluster, fourLetterWord, startZooKeeper } from '../../support/zookeeper-server.js';

/**
 * The typed client over our addon against a real ZooKeeper of its own: nothing else writes to it,
 * so the server's zxid (`srvr`) counts exactly the transactions of a test.
 */
let zk: ZooKeeperCluster;
let connection: RawZkConnection;
let client: ZkClient;

beforeAll(async () => {
  zk = await startZooKeeper(1);
  connection = await connectRawClient(zk.connectString, 4_000);
  client = connection.client;
});

afterAll(async () => {
  await connection?.close();
  await zk?.stop();
});

async function serverZxid(): Promise<number> {
  const port = zk.nodes[0]!.clientPort;
  const match = /Zxid: (0x[0-9a-f]+)/i.exec(await fourLetterWord(port, 'srvr'));
  if (match?.[1] === undefined) throw new Error('no Zxid in srvr');
  return Number.parseInt(match[1], 16);
}

async function exists(path: string): Promise<boolean> {
  try {
    await client.get(path);
    return true;
  } catch (error) {
    if (isZkCode(error, 'NONODE')) return false;
    throw error;
  }
}

async function multiError(promise: Promise<unknown>): Promise<ZkMultiError> {
  const error: unknown = await promise.then(
    () => new Error('the transaction succeeded'),
    (rejection: unknown) => rejection,
  );
  if (!(error instanceof ZkMultiError)) throw error;
  return error;
}

describe('ZkClient: create2, getChildren2, setData', () => {
  it('create2 returns the created path and its Stat', async () => {
    const parent = await client.create2('/c2', 'parent', 'persistent');
    expect(parent.path).toBe('/c2');
    expect(parent.stat).toMatchObject({ version: 0, cversion: 0, numChildren: 0, dataLength: 6, ephemeralOwner: '0' });
    expect(parent.stat.czxid).toBeGreaterThan(0);
    expect(parent.stat.mzxid).toBe(parent.stat.czxid);

    const entry = await client.create2('/c2/A-', 'entry', 'ephemeralSequential');
    expect(entry.path).toMatch(/^\/c2\/A-\d{10}$/);
    expect(entry.stat.czxid).toBeGreaterThan(parent.stat.czxid);
    expect(entry.stat.ephemeralOwner).toBe(client.sessionId);
    expect((await client.get(entry.path)).stat).toEqual(entry.stat);
  });

  it('getChildren2 returns the children with the parent Stat', async () => {
    await client.create2('/gc2', '', 'persistent');
    const first = await client.create2('/gc2/a', '', 'ephemeral');
    await client.create2('/gc2/b', '', 'ephemeral');
    const listed = await client.getChildren2('/gc2');
    expect(listed.children.sort()).toEqual(['a', 'b']);
    expect(listed.stat).toMatchObject({ numChildren: 2, cversion: 2 });
    expect(listed.stat.pzxid).toBeGreaterThan(first.stat.czxid);
  });

  it('setData bumps the data version, and refuses a stale one', async () => {
    await client.create2('/sd', 'v0', 'persistent');
    const stat = await client.setData('/sd', 'v1', 0);
    expect(stat).toMatchObject({ version: 1, dataLength: 2 });
    await expect(client.setData('/sd', 'v2', 0)).rejects.toMatchObject({ code: 'BADVERSION' });
    expect((await client.get('/sd')).data.toString()).toBe('v1');
  });

  it('existsWatched answers the Stat and watches the node; on a missing node null, and the watch waits for its creation', async () => {
    const created = await client.create2('/ew', 'some data', 'persistent');
    const onNode: string[] = [];
    expect(await client.existsWatched('/ew', (type) => onNode.push(type))).toEqual(created.stat);
    await client.delete('/ew');
    await vi.waitFor(() => expect(onNode).toEqual(['deleted']));

    const onMissing: string[] = [];
    expect(await client.existsWatched('/ew', (type) => onMissing.push(type))).toBeNull();
    await client.create2('/ew', '', 'persistent');
    await vi.waitFor(() => expect(onMissing).toEqual(['created']));
    expect(onNode).toEqual(['deleted']);
  });
});

describe('ZkClient.multi', () => {
  it('creates containers, ephemerals and sequential entries in one transaction: one zxid', async () => {
    const before = await serverZxid();
    const results = await client.multi([
      { type: 'create', path: '/tx', mode: 'container' },
      { type: 'create', path: '/tx/doc', mode: 'container' },
      { type: 'create', path: '/tx/doc/B-', data: 'waiter', mode: 'ephemeralSequential' },
      { type: 'create', path: '/tx/doc/privateLock', data: 'holder', mode: 'ephemeral' },
    ]);
    const after = await serverZxid();

    expect(after - before).toBe(1);
    expect(results.map((r) => r.code)).toEqual(['OK', 'OK', 'OK', 'OK']);
    expect(results.map((r) => r.path)).toEqual(['/tx', '/tx/doc', expect.stringMatching(/^\/tx\/doc\/B-\d{10}$/), '/tx/doc/privateLock']);
    for (const result of results) expect(result.stat?.czxid).toBe(after);
    // The Stats match what the server stores (the ephemerals' are derived from the zxid).
    for (const result of results.slice(2)) {
      const stored = (await client.get(result.path!)).stat;
      expect({ ...result.stat, ctime: stored.ctime, mtime: stored.mtime }).toEqual(stored);
    }
    expect(results[3]!.stat?.ephemeralOwner).toBe(client.sessionId);
    expect((await client.getChildren2('/tx/doc')).stat.numChildren).toBe(2);
  });

  it('writes every op\'s path and data as given: UTF-8 text, Buffers, no data, and a thousand ops in one transaction', async () => {
    const text = 'ünï "quoted" 😀 \u0000 lone \ud800 end';
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const many = Array.from({ length: 1_000 }, (_, i) => ({ type: 'create' as const, path: `/utf/many/doc-€-${i}`, data: `data ${i} ${'x'.repeat(i % 50)}`, mode: 'persistent' as const }));
    await client.multi([
      { type: 'create', path: '/utf', mode: 'persistent' },
      { type: 'create', path: '/utf/ünï-€', data: text, mode: 'persistent' },
      { type: 'create', path: '/utf/bytes', data: bytes, mode: 'persistent' },
      { type: 'create', path: '/utf/empty', mode: 'persistent' },
      { type: 'create', path: '/utf/many', mode: 'persistent' },
      ...many,
    ]);

    // An unpaired surrogate cannot be UTF-8: it is replaced, as every string the addon sends.
    expect((await client.get('/utf/ünï-€')).data?.toString('utf8')).toBe(text.replace('\ud800', '\ufffd'));
    expect((await client.get('/utf/bytes')).data).toEqual(bytes);
    expect((await client.get('/utf/empty')).data?.length ?? 0).toBe(0);
    for (const i of [0, 1, 499, 999]) expect((await client.get(`/utf/many/doc-€-${i}`)).data?.toString('utf8')).toBe(many[i]!.data);
    expect((await client.getChildren('/utf/many')).length).toBe(1_000);
  });

  it('sends transactions larger than the socket takes at once whole, in parts that line up', async () => {
    // The addon frames each request's length into its bytes (one send per request instead of the
    // C client's two). With the link frozen, 8 transactions of 900 KB fill the socket buffers: the
    // rest goes out in parts as the link drains, and every part must continue where the last ended.
    const forwarder = await TcpForwarder.start(zk.connectString);
    const viaForwarder = await connectRawClient(forwarder.connectString, 10_000);
    try {
      const payload = (t: number, i: number): Buffer => Buffer.alloc(100_000, String.fromCharCode(97 + ((t * 9 + i) % 26)));
      await viaForwarder.client.create('/large', '', 'persistent');
      forwarder.freeze();
      const transactions = Array.from({ length: 8 }, (_, t) =>
        viaForwarder.client.multi(Array.from({ length: 9 }, (_, i) => ({ type: 'create' as const, path: `/large/t${t}-${i}`, data: payload(t, i), mode: 'persistent' as const }))),
      );
      await new Promise((resolve) => setImmediate(resolve));
      forwarder.unfreeze();
      await Promise.all(transactions);
      for (let t = 0; t < 8; t++) for (let i = 0; i < 9; i++) expect((await client.get(`/large/t${t}-${i}`)).data.equals(payload(t, i))).toBe(true);
      // The session is still in step: a small request after them is answered as usual.
      expect((await viaForwarder.client.multi([{ type: 'check', path: '/large', version: 0 }]))[0]?.code).toBe('OK');
    } finally {
      await viaForwarder.close();
      await forwarder.close();
    }
  });

  it('names the op that failed, and applies nothing', async () => {
    await client.create2('/held', '', 'persistent');
    const before = await serverZxid();
    const error = await multiError(
      client.multi([
        { type: 'create', path: '/fresh-a', mode: 'persistent' },
        { type: 'create', path: '/held', mode: 'persistent' },
        { type: 'create', path: '/fresh-b', mode: 'ephemeral' },
      ]),
    );

    expect(error.failedIndex).toBe(1);
    expect(error.code).toBe('NODEEXISTS');
    expect(error.failedOp).toMatchObject({ type: 'create', path: '/held' });
    expect(error.results.map((r) => r.code)).toEqual(['OK', 'NODEEXISTS', 'RUNTIMEINCONSISTENCY']);
    expect(isZkCode(error, 'NODEEXISTS')).toBe(true);
    expect(await exists('/fresh-a')).toBe(false);
    expect(await exists('/fresh-b')).toBe(false);
    // A refused transaction still takes a zxid on the server (its error transaction).
    expect((await serverZxid()) - before).toBe(1);
  });

  it('fails a check on a data version that was bumped, deleting nothing', async () => {
    const doc = await client.create2('/checked', '', 'persistent');
    await client.create2('/checked/privateLock', '', 'ephemeral');
    await client.setData('/checked', 'forced release', doc.stat.version);

    const error = await multiError(
      client.multi([
        { type: 'check', path: '/checked', version: doc.stat.version },
        { type: 'delete', path: '/checked/privateLock', version: 0 },
      ]),
    );

    expect(error.failedIndex).toBe(0);
    expect(error.code).toBe('BADVERSION');
    expect(await exists('/checked/privateLock')).toBe(true);
  });

  it('checks, sets and deletes in one transaction, with the setData Stat', async () => {
    await client.create2('/release', '', 'persistent');
    await client.create2('/release/privateLock', '', 'ephemeral');
    const results = await client.multi([
      { type: 'check', path: '/release', version: 0 },
      { type: 'setData', path: '/release', data: 'next', version: 0 },
      { type: 'delete', path: '/release/privateLock', version: 0 },
    ]);
    expect(results.map((r) => [r.type, r.code])).toEqual([
      ['check', 'OK'],
      ['setData', 'OK'],
      ['delete', 'OK'],
    ]);
    expect(results[1]!.stat).toMatchObject({ version: 1, dataLength: 4, numChildren: 1 });
    expect(await exists('/release/privateLock')).toBe(false);
  });

  it('counts transactions, their ops and those refused', async () => {
    const stats = newStats();
    const own = new ZkClient({ servers: zk.connectString, sessionTimeoutMs: 4_000 }, stats);
    const connected = new Promise<void>((resolve) => own.once('connect', resolve));
    own.connect();
    await connected;
    try {
      await own.multi([
        { type: 'create', path: '/counted', mode: 'ephemeral' },
        { type: 'delete', path: '/counted' },
      ]);
      await own.multi([{ type: 'create', path: '/counted', mode: 'ephemeral' }]);
      expect(stats.zkOps).toMatchObject({ multi: 2, multiOps: 3, multiRefused: 0, create: 0, delete: 0 });
      await expect(own.multi([{ type: 'create', path: '/counted', mode: 'ephemeral' }])).rejects.toMatchObject({ code: 'NODEEXISTS' });
      expect(stats.zkOps).toMatchObject({ multi: 3, multiOps: 4, multiRefused: 1 });
    } finally {
      await own.close();
    }
  });
});
