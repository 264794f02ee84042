import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import type { LoggedRequest } from '../../support/es-stand-in.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ZkWireTap } from '../../support/zk-wire-tap.js';
import { ndjson, send } from './write-client.js';

/**
 * The work one request can cause is bounded — requests outstanding on the
 * ZooKeeper session, alias look-ups in flight, and the alias cache.
 */
const NDJSON = { 'content-type': 'application/x-ndjson' };
/**
 * docs/lock-protocol.md, "Batching": at most two chunks of ≤ 1,000 documents of one request are in flight,
 * each with at most 1,000 requests outstanding (a read per known document and one transaction for the
 * fresh ones, then one for the known ones), so one request never has more than 2,000.
 */
const MAX_OUTSTANDING_ZOOKEEPER_REQUESTS = 2_000;
/** docs/requests-and-responses.md: alias look-ups in flight per proxy. */
const MAX_CONCURRENT_ALIAS_LOOKUPS = 4;

describe('work per request is bounded', () => {
  describe('on the ZooKeeper session', () => {
    let tap: ZkWireTap;
    let stack: WriteStack;
    beforeAll(async () => {
      tap = await ZkWireTap.start(inject('zookeeperConnect'));
      stack = await startWriteStack({ zookeeper: tap.connectString });
    });
    afterAll(async () => {
      await stack?.close();
      await tap?.close();
    });

    it('a bulk of 3,000 documents never has more than the bound of requests outstanding', async () => {
      tap.resetCounts();
      const lines = Array.from({ length: 3_000 }, (_, i) => [{ index: { _index: 'bounded', _id: `doc-${i}` } }, { n: i }]).flat();
      const answer = await send(stack.urls[0]!, 'POST', '/_bulk', ndjson(lines), NDJSON);
      expect(answer.status).toBe(200);
      expect(answer.json.errors).toBe(false);
      expect(stack.standIn.documents('bounded').size).toBe(3_000);
      expect(tap.maxOutstanding).toBeGreaterThan(0);
      expect(tap.maxOutstanding).toBeLessThanOrEqual(MAX_OUTSTANDING_ZOOKEEPER_REQUESTS);
    });
  });

  describe.each(LOCK_BACKENDS)('alias look-ups and the alias cache ($name locks)', (locks) => {
    let stack: WriteStack | undefined;
    afterEach(async () => {
      await stack?.close();
      stack = undefined;
    });

    it('one bulk naming 40 aliases keeps at most the bound of look-ups in flight', async () => {
      stack = await startWriteStack({ ...locks.stackLocks(), standIn: { readLatencyMs: 30 } });
      const aliases = Array.from({ length: 40 }, (_, i) => `alias-${i}`);
      for (const alias of aliases) stack.standIn.defineAlias(alias, `${alias}-000001`);
      const lines = aliases.flatMap((alias) => [{ index: { _index: alias, _id: '1' } }, { alias }]);
      const answer = await send(stack.urls[0]!, 'POST', '/_bulk', ndjson(lines), NDJSON);
      expect(answer.status).toBe(200);
      expect(answer.json.errors).toBe(false);
      const lookups = stack.standIn.requests.filter((request) => request.url.endsWith('/_alias'));
      // Each alias, then its write index (a write through an alias is keyed as one to its write index).
      expect(lookups).toHaveLength(80);
      expect(maxConcurrent(lookups)).toBeLessThanOrEqual(MAX_CONCURRENT_ALIAS_LOOKUPS);
    });

    it('the alias cache keeps the most recently used names and evicts the others', async () => {
      stack = await startWriteStack({ ...locks.stackLocks(), settings: { proxy: { aliasCacheTtlMs: 600_000, aliasCacheSize: 3 } } });
      for (const alias of ['a1', 'a2', 'a3', 'a4']) stack.standIn.defineAlias(alias, `${alias}-000001`);
      for (const alias of ['a1', 'a2', 'a3', 'a4', 'a4', 'a1']) {
        expect((await send(stack.urls[0]!, 'PUT', `/${alias}/_doc/1`, { alias })).status).toBeLessThan(300);
      }
      const lookupsOf = (alias: string): number => stack!.standIn.requests.filter((request) => request.url === `/${alias}/_alias`).length;
      // a1 was pushed out by a2..a4 (capacity 3) and had to be looked up again; a4 stayed cached.
      expect(lookupsOf('a1')).toBe(2);
      expect(lookupsOf('a4')).toBe(1);
    });
  });
});

/** The largest number of requests whose [arrival, answer] intervals overlap. */
function maxConcurrent(requests: readonly LoggedRequest[]): number {
  const edges = requests.flatMap((request) => [
    { at: request.arrivedAt, delta: 1 },
    { at: request.finishedAt ?? Number.POSITIVE_INFINITY, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let max = 0;
  for (const edge of edges) {
    current += edge.delta;
    max = Math.max(max, current);
  }
  return max;
}
