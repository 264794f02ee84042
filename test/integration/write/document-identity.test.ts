import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ndjson, send } from './write-client.js';

/**
 * Writes that Elasticsearch applies to one document, spelled so that only a proxy reading the
 * headers and ids as Elasticsearch does sees one document: compatible-with=07 (version 7 for
 * Elasticsearch 8) and ids of unpaired surrogates (stored by Lucene as U+FFFD, 1 byte each for
 * Java's length check). The stand-in applies each write when its latency ends and counts overlaps.
 */
const COMPAT_07 = {
  accept: 'application/vnd.elasticsearch+json; compatible-with=07',
  'content-type': 'application/vnd.elasticsearch+json; compatible-with=07',
};
const NDJSON = { 'content-type': 'application/x-ndjson' };

describe.each(LOCK_BACKENDS)('one document however it is spelled, through two proxies ($name locks)', (locks) => {
  let stack: WriteStack;
  beforeAll(async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), proxies: 2, standIn: { writeLatencyMs: 150 } });
  });
  afterAll(() => stack?.close());

  /** The document's source is the one its last applied write left, and no two writes overlapped. */
  function expectSerialized(index: string, id: string, writes: number): void {
    expect(stack.standIn.overlaps.count).toBe(0);
    const history = stack.standIn.history(index, id);
    expect(history).toHaveLength(writes);
    expect(stack.standIn.document(index, id)?.source).toEqual(history.at(-1)?.body);
  }

  it('serializes typed writes with compatible-with=07 (single and bulk) with each other', async () => {
    const [a, b] = stack.urls;
    const answers = await Promise.all([
      send(a!, 'PUT', '/typed/legacy/1', { n: 1 }, COMPAT_07),
      send(b!, 'PUT', '/typed/legacy/1', { n: 2 }, COMPAT_07),
      send(a!, 'POST', '/typed/legacy/_bulk', ndjson([{ index: { _id: '1' } }, { n: 3 }]), { ...COMPAT_07, 'content-type': 'application/vnd.elasticsearch+x-ndjson; compatible-with=07' }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 201].sort());
    expectSerialized('typed', '1', 3);
  });

  it('serializes bulks whose ids are 171 different unpaired surrogates: one document to Elasticsearch', async () => {
    const [a, b] = stack.urls;
    const bulk = (id: string, n: number): string => ndjson([{ index: { _index: 'lone', _id: id } }, { n }]);
    const answers = await Promise.all([
      send(a!, 'POST', '/_bulk', bulk('\ud800'.repeat(171), 1), NDJSON),
      send(b!, 'POST', '/_bulk', bulk('\udc00'.repeat(171), 2), NDJSON),
      send(a!, 'POST', '/_bulk', bulk('\udbff'.repeat(171), 3), NDJSON),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers.map((answer) => answer.json.errors)).toEqual([false, false, false]);
    expectSerialized('lone', '\ufffd'.repeat(171), 3);
  });
});
