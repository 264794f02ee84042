import { describe, expect, it } from 'vitest';
import type { NodeMode } from '../../../src/zookeeper-client/zk-client.js';
import { loadZkAddon } from '../../../src/zookeeper-client/zk-addon.js';
import type { ZkOp } from '../../../src/zookeeper-client/zk-multi.js';
import { decodeMulti, encodeMulti, type NativeMultiAnswer } from '../../../src/zookeeper-client/zk-multi-native.js';

/**
 * The transaction's form on the way into our addon and back (zk-multi-native.ts; native/node-zk.cpp
 * AMulti). What the server makes of it is tested against a real one in zk-client.test.ts.
 */
const FLAGS: Record<NodeMode, number> = { persistent: 0, ephemeral: 1, persistentSequential: 2, ephemeralSequential: 3, container: 4 };
const STAT_FIELDS = 11;

const OPS: ZkOp[] = [
  { type: 'create', path: '/doc', mode: 'container' },
  { type: 'create', path: '/doc/privateLock', data: 'holder', mode: 'ephemeral', acl: 'creator' },
  { type: 'check', path: '/doc', version: 3 },
  { type: 'setData', path: '/doc', data: Buffer.from('next'), version: 3 },
  { type: 'delete', path: '/doc/old' },
];

function answerOf(parts: Partial<NativeMultiAnswer> & { readonly rcs: readonly number[] }): NativeMultiAnswer & { readonly rcs: readonly number[] } {
  return { paths: null, stats: null, owners: null, ...parts };
}

describe('encodeMulti', () => {
  it('lays the ops out as op codes, three numbers each (flags, version, ACL mode), paths and data', () => {
    const request = encodeMulti(OPS, FLAGS);
    expect([...request.kinds]).toEqual([1, 1, 13, 5, 2]);
    expect([...request.ints]).toEqual([4, -1, 0, 1, -1, 1, 0, 3, 0, 0, 3, 0, 0, -1, 0]);
    expect(request.paths).toEqual(['/doc', '/doc/privateLock', '/doc', '/doc', '/doc/old']);
    expect(request.data).toEqual(['', 'holder', undefined, Buffer.from('next'), undefined]);
  });
});

describe('decodeMulti', () => {
  const created = { zxid: 0x1_0000_002a, sessionId: () => '10a0b' };

  it('takes a Stat the server sent, and derives a create\'s from the transaction when it sent none', () => {
    const stats = new Float64Array(OPS.length * STAT_FIELDS);
    // The container's Stat as the server sent it; the setData's.
    stats.set([1, 0x1_0000_002a, 0x1_0000_002a, 0x1_0000_002a, 0, 0, 0, 1700000000000, 1700000000000, 0, 0], 0);
    stats.set([1, 7, 0x1_0000_002a, 0x1_0000_002a, 4, 1, 0, 1600000000000, 1700000000000, 4, 1], 3 * STAT_FIELDS);
    const results = decodeMulti(OPS, answerOf({ rcs: [0, 0, 0, 0, 0], paths: ['/doc', '/doc/privateLock'], stats }), 0, created);

    expect(results.map((r) => [r.type, r.code])).toEqual([
      ['create', 'OK'],
      ['create', 'OK'],
      ['check', 'OK'],
      ['setData', 'OK'],
      ['delete', 'OK'],
    ]);
    expect(results[0]).toMatchObject({ path: '/doc', stat: { czxid: 0x1_0000_002a, ctime: 1700000000000, ephemeralOwner: '0' } });
    // No Stat from the server (ZOOKEEPER-4026): exact but for the times, owned by this session.
    expect(results[1]!.stat).toEqual({
      czxid: 0x1_0000_002a,
      mzxid: 0x1_0000_002a,
      pzxid: 0x1_0000_002a,
      version: 0,
      cversion: 0,
      aversion: 0,
      ctime: 0,
      mtime: 0,
      dataLength: 6,
      numChildren: 0,
      ephemeralOwner: '10a0b',
    });
    expect(results[3]!.stat).toMatchObject({ czxid: 7, version: 4, cversion: 1, dataLength: 4, numChildren: 1, mtime: 1700000000000 });
    expect(results[2]!.stat).toBeUndefined();
    expect(results[4]!.stat).toBeUndefined();
  });

  it('gives a sequential node its name from the answer and a Stat its owner', () => {
    const ops: ZkOp[] = [{ type: 'create', path: '/doc/B-', data: 'waiter', mode: 'ephemeralSequential' }];
    const stats = new Float64Array(STAT_FIELDS);
    stats.set([1, 9, 9, 9, 0, 0, 0, 1, 1, 6, 0]);
    const [result] = decodeMulti(ops, answerOf({ rcs: [0], paths: ['/doc/B-0000000012'], stats, owners: ['10a0b'] }), 0, created);
    expect(result).toMatchObject({ path: '/doc/B-0000000012', stat: { czxid: 9, ephemeralOwner: '10a0b' } });
  });

  it('names each op\'s own code when an op failed, with no paths or Stats', () => {
    const results = decodeMulti(OPS.slice(0, 3), answerOf({ rcs: [0, -110, -2] }), -110, created);
    expect(results.map((r) => r.code)).toEqual(['OK', 'NODEEXISTS', 'RUNTIMEINCONSISTENCY']);
    expect(results.every((r) => r.path === undefined && r.stat === undefined)).toBe(true);
  });
});

describe('the addon\'s a_multi', () => {
  it('refuses arguments that do not agree, before anything is sent', () => {
    const { ZooKeeper } = loadZkAddon();
    const handle = new ZooKeeper();
    const { kinds, ints, paths, data } = encodeMulti(OPS, FLAGS);
    const done = (): void => undefined;
    expect(() => handle.a_multi(kinds, ints.subarray(1), paths, data, done)).toThrow(/disagree on the number of ops/);
    expect(() => handle.a_multi(kinds, ints, paths.slice(1), data, done)).toThrow(/disagree on the number of ops/);
    // An op list in the old form (one object per op) is refused, not misread.
    expect(() => (handle.a_multi as unknown as (ops: unknown, cb: unknown) => number)([{ kind: 1, path: '/x' }], done)).toThrow(/expected/);
  });
});
