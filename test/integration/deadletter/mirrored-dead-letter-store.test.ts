import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@elastic/elasticsearch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileDeadLetterStore } from '../../../src/deadletter/file-dead-letter-store.js';
import { openDeadLetterStore, type OpenedDeadLetterStore } from '../../../src/deadletter/open-dead-letter-store.js';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { testSettings } from '../../support/test-settings.js';
import { capturingLogger, deadLetterRecord } from './dead-letter-fixtures.js';

const INDEX = 'proxy-dead-letters';
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const at = (seconds: number): Date => new Date(T0 + seconds * 1000);

describe('openDeadLetterStore with proxy.deadletter.index: local files mirrored to the shared index', () => {
  let standIn: EsStandIn;
  let client: Client;
  let root: string;
  const opened: OpenedDeadLetterStore[] = [];

  /** One proxy instance's queue: its own directory, the shared index. */
  const instance = (name: string, logger = capturingLogger(), index: string | null = INDEX) => {
    const dir = join(root, name);
    const settings = testSettings({ elasticsearch: { hosts: [standIn.url] }, proxy: { deadLetterDir: dir, deadLetterIndex: index } });
    const store = openDeadLetterStore(settings, { cluster: client, logger });
    opened.push(store);
    return { store, files: new FileDeadLetterStore(dir), logger };
  };

  beforeEach(async () => {
    standIn = await startEsStandIn();
    client = new Client({ node: standIn.url, maxRetries: 0 });
    root = await mkdtemp(join(tmpdir(), 'dlq-mirror-'));
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    await client.close();
    await standIn.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('appends to the local file and to the index', async () => {
    const { store, files, logger } = instance('a');
    const record = deadLetterRecord('doc-1', at(1));
    await store.append(record);
    expect(await files.get(record.id)).toEqual(record);
    expect(standIn.document(INDEX, record.id)?.source).toEqual(record);
    expect(logger.lines).toEqual([]);
  });

  it("reads the index's shared view: another instance's records, replayed marks made by either", async () => {
    const a = instance('a');
    const b = instance('b');
    const fromA = deadLetterRecord('from-a', at(1));
    const fromB = deadLetterRecord('from-b', at(2));
    await a.store.append(fromA);
    await b.store.append(fromB);

    expect((await a.store.list()).records.map((record) => record.id)).toEqual([fromA.id, fromB.id]);
    expect(await a.store.get(fromB.id)).toEqual(fromB);
    expect(await a.files.get(fromB.id)).toBeNull();

    expect(await a.store.markReplayed(fromB.id, '200', at(5))).toBe(true);
    expect((await b.store.list()).records.map((record) => record.id)).toEqual([fromA.id]);
    expect(await b.store.get(fromB.id)).toMatchObject({ replayStatus: '200', replayedAt: at(5).toISOString() });
    expect(await a.store.markReplayed('dlq-unknown', '200')).toBe(false);

    // Marking one's own record marks the local file too, so the fallback view agrees.
    expect(await a.store.markReplayed(fromA.id, '201')).toBe(true);
    expect((await a.files.get(fromA.id))?.replayStatus).toBe('201');
  });

  it('keeps the record on disk and logs an error when the index append fails (connection reset)', async () => {
    const { store, files, logger } = instance('a');
    standIn.injectFault({ kind: 'reset-before-headers', match: (request) => request.url.startsWith(`/${INDEX}/_create/`), times: Infinity });
    const record = deadLetterRecord('doc-1', at(1));
    await store.append(record);
    expect(await files.get(record.id)).toEqual(record);
    expect(standIn.document(INDEX, record.id)).toBeUndefined();
    expect(logger.lines).toEqual([
      expect.objectContaining({ level: 'error', fields: expect.objectContaining({ deadLetterId: record.id, index: INDEX }) }),
    ]);
  });

  it('with the index down: appends stay durable, list and get fall back to the local files with a warning', async () => {
    const a = instance('a');
    const b = instance('b');
    const shared = deadLetterRecord('shared', at(1));
    await b.store.append(shared);
    await standIn.refuseConnections();

    const local = deadLetterRecord('local', at(2));
    await a.store.append(local);
    expect(await a.files.get(local.id)).toEqual(local);
    expect(a.logger.lines.map((line) => [line.level, line.fields.deadLetterId])).toEqual([['error', local.id]]);

    const listing = await a.store.list();
    expect(listing.records.map((record) => record.id)).toEqual([local.id]);
    expect(listing.warnings).toEqual([expect.stringContaining(`index [${INDEX}] could not be read`)]);
    expect(await a.store.get(local.id)).toEqual(local);
    expect(await a.store.get(shared.id)).toBeNull();

    // A local record can still be marked; one only the index knows cannot (and says why, not "unknown").
    expect(await a.store.markReplayed(local.id, '200')).toBe(true);
    await expect(a.store.markReplayed(shared.id, '200')).rejects.toMatchObject({ code: 'DEAD_LETTER_INDEX_FAILED' });
  });

  it('once the index is back, lists its view plus the local records that never reached it, named in a warning', async () => {
    const a = instance('a');
    const b = instance('b');
    await standIn.refuseConnections();
    const stranded = deadLetterRecord('stranded', at(2));
    await a.store.append(stranded);
    await standIn.acceptConnections();
    const early = deadLetterRecord('early', at(1));
    const late = deadLetterRecord('late', at(3));
    await b.store.append(early);
    await a.store.append(late);

    const listing = await a.store.list();
    expect(listing.records.map((record) => record.id)).toEqual([early.id, stranded.id, late.id]);
    expect(listing.warnings).toEqual([expect.stringContaining(`1 record(s) are only in this instance's files`)]);
    expect(listing.warnings?.[0]).toContain(stranded.id);
    // Other instances see only what reached the index.
    expect((await b.store.list()).records.map((record) => record.id)).toEqual([early.id, late.id]);

    // A local record replayed elsewhere (already in the index as replayed) is not mistaken for a stranded one.
    expect(await b.store.markReplayed(late.id, '200')).toBe(true);
    const after = await a.store.list();
    expect(after.records.map((record) => record.id)).toEqual([early.id, stranded.id]);
  });

  it('without proxy.deadletter.index it is the file store alone and never calls the cluster', async () => {
    const { store, files } = instance('a', capturingLogger(), null);
    const record = deadLetterRecord('doc-1', at(1));
    await store.append(record);
    expect((await store.list()).records).toEqual([record]);
    expect(await files.get(record.id)).toEqual(record);
    expect(standIn.requests).toHaveLength(0);
  });

  it('creates (and closes) its own cluster client from the settings when none is given', async () => {
    const settings = testSettings({ elasticsearch: { hosts: [standIn.url] }, proxy: { deadLetterDir: join(root, 'own'), deadLetterIndex: INDEX } });
    const store = openDeadLetterStore(settings);
    const record = deadLetterRecord('doc-1', at(1));
    try {
      await store.append(record);
      expect((await store.list()).records.map((r) => r.id)).toEqual([record.id]);
    } finally {
      await store.close();
    }
    expect(standIn.document(INDEX, record.id)).toBeDefined();
  });
});
