import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FencingMode } from '../../../src/config/settings.js';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { startZooKeeper, type ZooKeeperCluster } from '../../support/zookeeper-server.js';
import { exchange, isElasticsearchError, LEVEL } from './fault-kit.js';
import { answerOf, EXPIRY_SESSION_TIMEOUT_MS, fencedWritesCounted, historyOf, startExpiryPair, type ExpiryPair } from './fencing-kit.js';

const IN_FLIGHT = { 'x-fault-phase': 'in-flight' };
const NDJSON = { 'content-type': 'application/x-ndjson' };

/**
 * Issue #14: proxy A's write is held inside the cluster (a stand-in gate) while A's ZooKeeper link
 * is frozen past its session timeout; proxy B, granted the document once A's session expired,
 * writes it; then A's write is released. With proxy.fencing=on A's write carries the `_seq_no`
 * (or create) of the read A made under its lock, Elasticsearch refuses it, and the document ends
 * with B's content. With it off the stale write lands last: the documented limit of a lock alone.
 */
describe.each(['on', 'off'] satisfies FencingMode[])('a write that outlives its ZooKeeper session (proxy.fencing=%s)', (fencing) => {
  let zk: ZooKeeperCluster;
  let standIn: EsStandIn;
  let pair: ExpiryPair | undefined;
  const summary: string[] = [];

  beforeAll(async () => {
    zk = await startZooKeeper(1, { tickTimeMs: 200 });
    standIn = await startEsStandIn();
  }, 60_000);
  afterEach(async () => {
    await pair?.close();
    pair = undefined;
  });
  afterAll(async () => {
    console.log(`fencing session expiry (fencing=${fencing}): ${summary.join('; ')}`);
    await standIn?.stop();
    await zk?.stop();
  });

  it('single write: B’s content survives and A gets 409 (on) / A’s stale write lands last (off)', async () => {
    pair = await startExpiryPair(zk.connectString, standIn, fencing);
    const { urlA, urlB } = pair;
    expect(answerOf(await exchange(`${urlB}/fence/_doc/k1`, { method: 'PUT', body: '{"from":"seed"}' })).status).toBe(201);

    const gate = standIn.gate((request) => request.headers['x-fault-phase'] === 'in-flight');
    const stale = exchange(`${urlA}/fence/_doc/k1?refresh=false`, { method: 'PUT', body: '{"from":"a"}', headers: IN_FLIGHT }, 30_000);
    await gate.arrived(1);
    const frozenAt = performance.now();
    pair.zkLinkOfA.freeze();
    // B is granted the document only once ZooKeeper expired A's session.
    const next = answerOf(await exchange(`${urlB}/fence/_doc/k1`, { method: 'PUT', body: '{"from":"b"}' }, 30_000));
    expect(performance.now() - frozenAt).toBeGreaterThan(EXPIRY_SESSION_TIMEOUT_MS * 0.9);
    expect(next.status).toBe(200);
    gate.remove();
    const staleAnswer = answerOf(await stale);

    if (fencing === 'on') {
      expect(staleAnswer.status, staleAnswer.body).toBe(409);
      expect(isElasticsearchError(staleAnswer, ['version_conflict_engine_exception'])).toBe(true);
      expect(historyOf(standIn, 'fence', 'k1')).toEqual([
        [{ from: 'seed' }, 'created'],
        [{ from: 'b' }, 'updated'],
        [{ from: 'a' }, 'version_conflict_engine_exception'],
      ]);
      expect(standIn.document('fence', 'k1')?.source).toEqual({ from: 'b' });
      // The query string reached Elasticsearch as the client wrote it, plus the fence.
      const forwarded = standIn.requests.find((request) => request.headers['x-fault-phase'] === 'in-flight');
      expect(forwarded?.url).toBe('/fence/_doc/k1?refresh=false&if_seq_no=0&if_primary_term=1');
      expect(await fencedWritesCounted(pair.a)).toBe(1);
      const warned = pair.logsOfA.lines().filter((line) => line.level === LEVEL.warn && line.msg === 'stale write refused by its fence');
      expect(warned.map((line) => line.key)).toEqual(['fence/k1']);
    } else {
      expect(staleAnswer.status, staleAnswer.body).toBe(200);
      expect(historyOf(standIn, 'fence', 'k1')).toEqual([
        [{ from: 'seed' }, 'created'],
        [{ from: 'b' }, 'updated'],
        [{ from: 'a' }, 'updated'],
      ]);
      expect(standIn.document('fence', 'k1')?.source).toEqual({ from: 'a' });
      expect(await fencedWritesCounted(pair.a)).toBe(0);
    }
    summary.push(`single: stale write answered ${staleAnswer.status}, document ends ${JSON.stringify(standIn.document('fence', 'k1')?.source)}`);
  });

  it('bulk item: the stale item is refused under its own action key (on) / lands last (off); the other item is written', async () => {
    pair = await startExpiryPair(zk.connectString, standIn, fencing);
    const { urlA, urlB } = pair;
    // k2 missing: A's item goes as a create; k3 exists: A's item carries if_seq_no.
    const seeded = answerOf(await exchange(`${urlB}/fence/_doc/k3`, { method: 'PUT', body: '{"from":"seed"}' }));
    expect(seeded.status).toBe(201);
    const { _seq_no: seedSeqNo } = JSON.parse(seeded.body) as { _seq_no: number };
    const body = [
      JSON.stringify({ index: { _index: 'fence', _id: 'k2' } }),
      JSON.stringify({ from: 'a' }),
      JSON.stringify({ index: { _index: 'fence', _id: 'k3' } }),
      JSON.stringify({ from: 'a' }),
    ].join('\n') + '\n';

    const gate = standIn.gate((request) => request.headers['x-fault-phase'] === 'in-flight');
    const stale = exchange(`${urlA}/_bulk`, { method: 'POST', body, headers: { ...IN_FLIGHT, ...NDJSON } }, 30_000);
    await gate.arrived(1);
    pair.zkLinkOfA.freeze();
    const next = answerOf(await exchange(`${urlB}/fence/_doc/k2`, { method: 'PUT', body: '{"from":"b"}' }, 30_000));
    expect(next.status).toBe(201);
    expect(answerOf(await exchange(`${urlB}/fence/_doc/k3`, { method: 'PUT', body: '{"from":"b"}' }, 30_000)).status).toBe(200);
    gate.remove();
    const staleAnswer = answerOf(await stale);
    expect(staleAnswer.status, staleAnswer.body).toBe(200);
    const items = (JSON.parse(staleAnswer.body) as { items: Record<string, { status: number; error?: { type: string } }>[] }).items;

    if (fencing === 'on') {
      // Sent as a create (k2 was missing at A's read), answered under the client's `index`.
      expect(items.map((item) => Object.keys(item))).toEqual([['index'], ['index']]);
      expect(items.map((item) => [item.index?.status, item.index?.error?.type])).toEqual([
        [409, 'version_conflict_engine_exception'],
        [409, 'version_conflict_engine_exception'],
      ]);
      const sent = standIn.requests.find((request) => request.headers['x-fault-phase'] === 'in-flight' && request.url === '/_bulk');
      expect(sent?.body.toString()).toBe(
        `{"index":{"op_type":"create","_index":"fence","_id":"k2"}}\n{"from":"a"}\n{"index":{"if_seq_no":${seedSeqNo},"if_primary_term":1,"_index":"fence","_id":"k3"}}\n{"from":"a"}\n`,
      );
      expect(historyOf(standIn, 'fence', 'k2')).toEqual([
        [{ from: 'b' }, 'created'],
        [{ from: 'a' }, 'version_conflict_engine_exception'],
      ]);
      expect(standIn.document('fence', 'k2')?.source).toEqual({ from: 'b' });
      expect(standIn.document('fence', 'k3')?.source).toEqual({ from: 'b' });
      expect(await fencedWritesCounted(pair.a)).toBe(2);
    } else {
      expect(items.map((item) => [item.index?.status])).toEqual([[200], [200]]);
      expect(historyOf(standIn, 'fence', 'k2')).toEqual([
        [{ from: 'b' }, 'created'],
        [{ from: 'a' }, 'updated'],
      ]);
      expect(standIn.document('fence', 'k2')?.source).toEqual({ from: 'a' });
      expect(standIn.document('fence', 'k3')?.source).toEqual({ from: 'a' });
    }
    summary.push(`bulk: stale items answered ${items.map((item) => item.index?.status).join('/')}, k2 ends ${JSON.stringify(standIn.document('fence', 'k2')?.source)}`);
  });
});
