import { afterEach, describe, expect, it } from 'vitest';
import { ndjson, NDJSON, startWritePath, until, type WritePathHarness } from './write-harness.js';

/**
 * The write path locks the document Elasticsearch writes: its id as Lucene stores it (an unpaired
 * surrogate becomes U+FFFD, Uid.encodeId) and its length as Java counts it (String.getBytes(UTF_8):
 * an unpaired surrogate is one byte, `?`).
 */
const REPLACEMENT = '\ufffd';
const COMPAT_07 = {
  accept: 'application/vnd.elasticsearch+json;compatible-with=07',
  'content-type': 'application/vnd.elasticsearch+json;compatible-with=07',
};

let harness: WritePathHarness;
afterEach(async () => {
  await harness?.engine.close();
});

/** Holds `index/id` as another writer would, starts the write, and shows it queued behind that lock. */
async function expectWaitsFor(index: string, id: string, method: string, url: string, options: Parameters<WritePathHarness['start']>[2]): Promise<void> {
  const sentBefore = harness.forwarder.sent.length;
  const blocker = await harness.block(index, id);
  const write = harness.start(method, url, options);
  await until(async () => expect(await harness.queueLength(index, id)).toBe(1));
  expect(harness.forwarder.sent).toHaveLength(sentBefore);
  await blocker.release();
  await write.done;
  expect(harness.forwarder.sent).toHaveLength(sentBefore + 1);
}

describe('the document a write is locked on', () => {
  it('locks a bulk item whose id is 171 unpaired surrogates (171 bytes for Java) on the id Lucene stores', async () => {
    harness = startWritePath();
    const body = ndjson([{ index: { _index: 'p', _id: '\ud800'.repeat(171) } }, { n: 1 }]);
    await expectWaitsFor('p', REPLACEMENT.repeat(171), 'POST', '/_bulk', { body, headers: NDJSON });
  });

  it('gives two different unpaired surrogates, and U+FFFD itself, one key: Lucene stores all three as EF BF BD', async () => {
    harness = startWritePath();
    await expectWaitsFor('p', REPLACEMENT, 'POST', '/_bulk', { body: ndjson([{ index: { _index: 'p', _id: '\udc00' } }, { n: 1 }]), headers: NDJSON });
    await expectWaitsFor('p', REPLACEMENT, 'POST', '/_bulk', { body: ndjson([{ delete: { _index: 'p', _id: '\ud800' } }]), headers: NDJSON });
    await expectWaitsFor('p', REPLACEMENT, 'PUT', '/p/_doc/%EF%BF%BD', { body: { n: 1 } });
  });

  it('locks a typed write with compatible-with=07', async () => {
    harness = startWritePath();
    await expectWaitsFor('p', '1', 'PUT', '/p/t/1', { body: { n: 1 }, headers: COMPAT_07 });
    await expectWaitsFor('p', '2', 'POST', '/p/t/_bulk', { body: ndjson([{ delete: { _id: '2' } }]), headers: COMPAT_07 });
  });

  it('locks a delete with an id longer than 512 bytes: Elasticsearch checks the length of indexed ids only', async () => {
    harness = startWritePath();
    await expectWaitsFor('p', 'd'.repeat(600), 'DELETE', `/p/_doc/${'d'.repeat(600)}`, {});
  });

  it('answers an index of an id longer than 512 bytes as Elasticsearch does, without forwarding it', async () => {
    harness = startWritePath();
    const res = await harness.write('PUT', `/p/_doc/${'x'.repeat(513)}`, { body: { n: 1 } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      error: { type: 'action_request_validation_exception', reason: `Validation Failed: 1: id [${'x'.repeat(513)}] is too long, must be no longer than 512 bytes but was: 513;` },
      status: 400,
    });
    expect(harness.forwarder.sent).toHaveLength(0);
  });

  it('answers a bulk with an indexed id longer than 512 bytes (as Java counts) with 400, as Elasticsearch does, without forwarding it', async () => {
    harness = startWritePath();
    const long = `${'\ud800'.repeat(500)}é${'x'.repeat(11)}`; // 500 + 2 + 11 = 513 bytes for Java
    const body = ndjson([{ index: { _index: 'p', _id: 'fine' } }, { n: 1 }, { create: { _index: 'p', _id: long } }, { n: 2 }]);
    const res = await harness.write('POST', '/_bulk', { body, headers: NDJSON });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { type: 'action_request_validation_exception' }, status: 400 });
    expect(res.json().error.reason).toContain('is too long, must be no longer than 512 bytes but was: 513;');
    expect(harness.forwarder.sent).toHaveLength(0);
  });
});

describe('ids too long to lock', () => {
  it('refuses a bulk deleting an id over 64 KiB with 400: Elasticsearch takes it, but no lock could hold it', async () => {
    harness = startWritePath();
    const body = ndjson([{ delete: { _index: 'p', _id: 'd'.repeat(65_537) } }, { delete: { _index: 'p', _id: 'fine' } }]);
    const res = await harness.write('POST', '/_bulk', { body, headers: NDJSON });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { type: 'illegal_argument_exception', reason: expect.stringContaining('65537 bytes') }, status: 400 });
    expect(res.json().error.reason.length).toBeLessThan(300);
    expect(harness.forwarder.sent).toHaveLength(0);
  });
});
