import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, errors } from '@elastic/elasticsearch';
import { ElasticsearchContainer, type StartedElasticsearchContainer } from '@testcontainers/elasticsearch';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDeadLetterRecord } from '../../../src/deadletter/dead-letter-record.js';
import { ElasticsearchDeadLetterStore } from '../../../src/deadletter/elasticsearch-dead-letter-store.js';
import type { HeldLock, LockKey } from '../../../src/lock/lock-engine.js';
import { startProxyRuntime, type ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { startProxy, type RunningProxy } from '../../../src/server/start-proxy.js';
import { detectContainerRuntime } from '../../support/container-runtime.js';
import { rawRequest } from '../../support/http-request.js';
import { testSettings, type TestSettingsOverrides } from '../../support/test-settings.js';
import { waitForLockService } from '../../support/write-stack.js';

/** The real cluster the write-path suites extend; needs Docker (or Podman) through testcontainers. */
const ELASTICSEARCH_IMAGE = 'docker.elastic.co/elasticsearch/elasticsearch:8.15.3';
const DEAD_LETTER_INDEX = 'proxy-dead-letters';

const runtime = await detectContainerRuntime();
const skipReason = runtime.available ? null : runtime.reason;
if (skipReason !== null) console.log(`[real-elasticsearch] suite skipped: ${skipReason}`);

describe.skipIf(skipReason !== null)(`real Elasticsearch 8 through the proxy${skipReason === null ? '' : ` (skipped: ${skipReason})`}`, () => {
  let container: StartedElasticsearchContainer | undefined;
  let passThrough: RunningProxy | undefined;
  /** The product: two instances sharing a lock root with long waits, one with short waits for 429s and dead letters. */
  const products: ProxyRuntime[] = [];
  const clients: Client[] = [];
  let deadLetterDir = '';

  const clientFor = (url: string): Client => {
    const client = new Client({ node: url });
    clients.push(client);
    return client;
  };
  const urlOf = (proxy: { proxyAddress: { port: number } }): string => `http://127.0.0.1:${proxy.proxyAddress.port}`;

  let client: Client | undefined;
  let direct: Client | undefined;
  let writerA: Client | undefined;
  let writerB: Client | undefined;
  let impatient: Client | undefined;

  beforeAll(async () => {
    container = await new ElasticsearchContainer(ELASTICSEARCH_IMAGE)
      .withEnvironment({ 'xpack.security.enabled': 'false', ES_JAVA_OPTS: '-Xms512m -Xmx512m' })
      .start();
    const zookeeper = inject('zookeeperConnect');
    const settings = testSettings({ elasticsearch: { hosts: [container.getHttpUrl()] }, zookeeper: { servers: zookeeper } });
    passThrough = await startProxy(settings, pino({ level: 'silent' }));
    client = clientFor(urlOf(passThrough));
    direct = clientFor(container.getHttpUrl());

    deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-real-dlq-'));
    const lockRoot = `/real-es-${Date.now().toString(36)}`;
    const product = (overrides: TestSettingsOverrides): Promise<ProxyRuntime> =>
      startProxyRuntime(
        testSettings({
          elasticsearch: { hosts: [container!.getHttpUrl()], ...overrides.elasticsearch },
          zookeeper: { servers: zookeeper, lockRoot, ...overrides.zookeeper },
          lock: { ...overrides.lock },
          proxy: { deadLetterDir, deadLetterIndex: DEAD_LETTER_INDEX, ...overrides.proxy },
        }),
        pino({ level: 'silent' }),
      );
    for (const overrides of [
      { lock: { foregroundTimeoutMs: 30_000, backgroundTimeoutMs: 30_000 } },
      { lock: { foregroundTimeoutMs: 30_000, backgroundTimeoutMs: 30_000 } },
      { lock: { foregroundTimeoutMs: 500, backgroundTimeoutMs: 200 }, elasticsearch: { requestRetryCount: 1 } },
    ] satisfies TestSettingsOverrides[]) {
      const started = await product(overrides);
      products.push(started);
      await waitForLockService(started);
    }
    writerA = clientFor(urlOf(products[0]!));
    writerB = clientFor(urlOf(products[1]!));
    impatient = clientFor(urlOf(products[2]!));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(products.map((product) => product.close()));
    await passThrough?.close();
    await container?.stop();
    if (deadLetterDir !== '') await rm(deadLetterDir, { recursive: true, force: true });
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('suite not started');
    return value;
  };
  /** Takes a document's lock the way another proxy's running write would hold it. */
  const holdLock = (key: LockKey): Promise<HeldLock> =>
    started(products[0]).locks.acquire(key, 'foreground', { timeoutMs: 10_000, owner: { host: 'test', pid: process.pid, requestId: 'held-by-test' } });

  it('passes index, get, search and bulk through unchanged', async () => {
    const es = started(client);
    const indexed = await es.index({ index: 'pass-through', id: 'a/1', document: { name: 'lamp' }, refresh: 'wait_for' });
    expect(indexed).toMatchObject({ _index: 'pass-through', _id: 'a/1', result: 'created' });
    const got = await es.get<{ name: string }>({ index: 'pass-through', id: 'a/1' });
    expect(got._source).toEqual({ name: 'lamp' });

    const bulk = await es.bulk({
      refresh: 'wait_for',
      operations: [{ index: { _index: 'pass-through', _id: '2' } }, { name: 'desk' }, { create: { _index: 'pass-through', _id: 'a/1' } }, { name: 'dup' }],
    });
    expect(bulk.items.map((item) => Object.values(item)[0]?.status)).toEqual([201, 409]);

    const found = await es.search<{ name: string }>({ index: 'pass-through', query: { match: { name: 'desk' } } });
    expect(found.hits.hits.map((hit) => hit._id)).toEqual(['2']);
  });

  it('answers /readyz once the cluster answers', async () => {
    const proxy = started(passThrough);
    const ready = await rawRequest({ host: '127.0.0.1', port: proxy.adminAddress.port }, { path: '/readyz' });
    expect(ready.status).toBe(200);
  });

  it('indexes, updates and deletes a document through the write path', async () => {
    const es = started(writerA);
    expect(await es.index({ index: 'rw-single', id: 'doc/1', document: { name: 'lamp', stock: 1 } })).toMatchObject({ result: 'created', _id: 'doc/1' });
    expect(await es.update({ index: 'rw-single', id: 'doc/1', doc: { stock: 2 } })).toMatchObject({ result: 'updated', _version: 2 });
    expect((await started(direct).get<{ stock: number }>({ index: 'rw-single', id: 'doc/1' }))._source).toEqual({ name: 'lamp', stock: 2 });
    expect(await es.delete({ index: 'rw-single', id: 'doc/1' })).toMatchObject({ result: 'deleted' });
    expect(await started(direct).exists({ index: 'rw-single', id: 'doc/1' })).toBe(false);
  });

  it('serializes concurrent partial updates of one document from two proxies: no version conflict, every update applied', async () => {
    await started(direct).index({ index: 'rw-contended', id: 'hot', document: { n: -1 }, refresh: 'wait_for' });
    const writers = [started(writerA), started(writerB)];
    const updates = Array.from({ length: 30 }, (_, n) => writers[n % 2]!.update({ index: 'rw-contended', id: 'hot', doc: { n } }));
    const results = await Promise.allSettled(updates);
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    const final = await started(direct).get({ index: 'rw-contended', id: 'hot' });
    expect(final._version).toBe(31);
  });

  it('runs index, create, update and delete items of one bulk through the write path', async () => {
    const answer = await started(writerB).bulk({
      refresh: 'wait_for',
      operations: [
        { index: { _index: 'rw-bulk', _id: 'a' } },
        { name: 'lamp' },
        { create: { _index: 'rw-bulk', _id: 'b' } },
        { name: 'desk' },
        { update: { _index: 'rw-bulk', _id: 'a' } },
        { doc: { name: 'lamp 2' } },
        { delete: { _index: 'rw-bulk', _id: 'b' } },
      ],
    });
    expect(answer.errors).toBe(false);
    expect(answer.items.map((item) => Object.values(item)[0]?.status)).toEqual([201, 201, 200, 200]);
    expect((await started(direct).get<{ name: string }>({ index: 'rw-bulk', id: 'a' }))._source).toEqual({ name: 'lamp 2' });
    expect(await started(direct).exists({ index: 'rw-bulk', id: 'b' })).toBe(false);
  });

  it('answers the items of a held document with per-item 429s inside a 200 bulk, and writes the rest', async () => {
    const held = await holdLock({ index: 'rw-partial', id: 'held' });
    try {
      const answer = await started(impatient).bulk({
        operations: [{ index: { _index: 'rw-partial', _id: 'free' } }, { n: 1 }, { index: { _index: 'rw-partial', _id: 'held' } }, { n: 2 }],
      });
      expect(answer.errors).toBe(true);
      expect(answer.items.map((item) => Object.values(item)[0]?.status)).toEqual([201, 429]);
      expect(answer.items[1]?.index?.error?.type).toBe('lock_wait_timeout_exception');
      expect(await started(direct).exists({ index: 'rw-partial', id: 'free' })).toBe(true);
      expect(await started(direct).exists({ index: 'rw-partial', id: 'held' })).toBe(false);
    } finally {
      await held.release();
    }
  });

  it('lets the official bulk helper complete by retrying the 429 items once the lock is free', async () => {
    const held = await holdLock({ index: 'rw-helper', id: 'hot' });
    const es = started(impatient);
    // The first bulk answer (with its 429 item) frees the document, as a finished running write would.
    let released: Promise<void> | null = null;
    const onResponse = (): void => {
      released ??= held.release();
    };
    es.diagnostic.on('response', onResponse);
    try {
      const ids = ['a', 'hot', 'b'];
      const result = await es.helpers.bulk({
        datasource: ids.map((id) => ({ id, writer: 'helper' })),
        onDocument: (doc) => ({ index: { _index: 'rw-helper', _id: doc.id } }),
        retries: 3,
        wait: 100,
        flushBytes: 1_000_000,
        refreshOnCompletion: true,
      });
      expect(result.failed).toBe(0);
      expect(result.successful).toBe(ids.length);
      expect(result.retry).toBeGreaterThan(0);
      expect((await started(direct).get<{ writer: string }>({ index: 'rw-helper', id: 'hot' }))._source).toEqual({ id: 'hot', writer: 'helper' });
    } finally {
      es.diagnostic.off('response', onResponse);
      await (released ?? held.release());
    }
  });

  it('dead-letters a background write whose retries ran out into the shared index', async () => {
    const held = await holdLock({ index: 'rw-dlq', id: 'kpi' });
    let deadLetterId: string | undefined;
    try {
      const attempt = started(impatient).index({ index: 'rw-dlq', id: 'kpi', document: { writer: 'late' } }, { headers: { 'x-lock-type': 'background' } });
      const failure = await attempt.then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(errors.ResponseError);
      if (!(failure instanceof errors.ResponseError)) return;
      expect(failure.statusCode).toBe(429);
      const header = failure.headers?.['x-dead-letter-id'];
      deadLetterId = typeof header === 'string' ? header : undefined;
    } finally {
      await held.release();
    }
    expect(deadLetterId).toMatch(/^dlq-/);
    const store = new ElasticsearchDeadLetterStore(started(direct), DEAD_LETTER_INDEX);
    const record = await store.get(deadLetterId!);
    expect(record).toMatchObject({ method: 'PUT', priority: 'background', keys: [{ index: 'rw-dlq', id: 'kpi' }], replayedAt: null });
    expect((await store.list()).records.map((r) => r.id)).toContain(deadLetterId);
  });

  it('keeps the dead-letter index readable by its mapping: sorted paging, the not-replayed filter, ids lookup', async () => {
    const store = new ElasticsearchDeadLetterStore(started(direct), 'proxy-dead-letters-paging', { pageSize: 2 });
    expect(await store.list()).toEqual({ records: [], corruptLines: [] });
    const base = Date.UTC(2026, 0, 1);
    const records = Array.from({ length: 5 }, (_, n) =>
      createDeadLetterRecord(
        {
          method: 'POST',
          url: '/_bulk',
          headers: { 'content-type': 'application/x-ndjson', 'x-strange.header': 'kept, not indexed' },
          body: Buffer.from([0xff, 0x00, n]),
          priority: 'background',
          keys: [{ index: 'paging', id: String(n) }],
          attemptTimes: [base + n * 1000],
          lastError: { code: 'LOCK_TIMEOUT', message: 'lock wait timed out' },
        },
        new Date(base + n * 1000),
      ),
    );
    for (const record of [...records].reverse()) await store.append(record);
    expect((await store.list()).records).toEqual(records);
    expect(await store.markReplayed(records[1]!.id, '200')).toBe(true);
    expect((await store.list()).records.map((r) => r.id)).toEqual(records.filter((_, n) => n !== 1).map((r) => r.id));
    expect(await store.knownIds([records[0]!.id, 'dlq-none'])).toEqual(new Set([records[0]!.id]));
    expect(await store.markReplayed('dlq-none', '200')).toBe(false);
  });
});
