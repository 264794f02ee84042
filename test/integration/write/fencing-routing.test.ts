import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardFor } from '../../support/es-stand-in/routing.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ndjson, send } from './write-client.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };
/** An id and a routing value on different shards of a two-shard index: a read by id alone misses the document. */
const ID = 'doc-1';
const ROUTING = 'r1';

/** proxy.fencing=on: the fence's read goes with the routing the write goes with, or it reads another shard. */
describe.each(LOCK_BACKENDS)('fenced writes with routing ($name locks)', (locks) => {
  let stack: WriteStack;
  let url: string;

  beforeAll(async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), settings: { proxy: { fencing: 'on' } } });
    url = stack.urls[0] ?? '';
    expect(shardFor(ID, 2)).not.toBe(shardFor(ROUTING, 2));
  });
  afterAll(async () => {
    await stack?.close();
  });

  const itemsOf = (json: Record<string, unknown>): { index?: { status?: number } }[] => json.items as { index?: { status?: number } }[];

  it('a bulk’s URL `routing` is the routing of its items’ fence reads: a plain index of an existing document updates it', async () => {
    stack.standIn.setShards('url-routed', 2);
    for (const v of [1, 2]) {
      const answer = await send(url, 'POST', `/url-routed/_bulk?routing=${ROUTING}`, ndjson([{ index: { _id: ID } }, { v }]), NDJSON);
      expect(answer.status).toBe(200);
      expect(itemsOf(answer.json)[0]?.index?.status).toBe(v === 1 ? 201 : 200);
    }
    expect(stack.standIn.document('url-routed', ID)?.source).toEqual({ v: 2 });
  });

  it('an alias’s `index_routing` is the routing of fence reads through it, for single writes and bulk items', async () => {
    stack.standIn.setShards('alias-routed-1', 2);
    stack.standIn.defineAlias('alias-routed', 'alias-routed-1', [], ROUTING);
    expect((await send(url, 'PUT', `/alias-routed/_doc/${ID}`, { v: 1 })).status).toBe(201);
    expect((await send(url, 'PUT', `/alias-routed/_doc/${ID}`, { v: 2 })).status).toBe(200);
    const bulk = await send(url, 'POST', '/_bulk', ndjson([{ index: { _index: 'alias-routed', _id: ID } }, { v: 3 }]), NDJSON);
    expect(itemsOf(bulk.json)[0]?.index?.status).toBe(200);
    expect(stack.standIn.document('alias-routed-1', ID)?.source).toEqual({ v: 3 });
  });
});
