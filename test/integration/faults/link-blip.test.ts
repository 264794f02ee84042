import { afterEach, describe, expect, inject, it } from 'vitest';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { type WriteStack, startWriteStack } from '../../support/write-stack.js';
import { exchange, waitUntil } from './fault-kit.js';

/**
 * A blip is not an outage: the proxy's ZooKeeper link breaks and stays down for a few hundred
 * milliseconds, far less than the safety margin (a quarter of the session timeout) and the
 * connect window (connection.retry × connection.delay). Writes arriving meanwhile wait for the
 * link within their lock timeout and go through, instead of being answered 503.
 */
const BLIP_MS = 300;

describe('a ZooKeeper link down for a few hundred milliseconds', () => {
  let stack: WriteStack | undefined;
  let link: TcpForwarder | undefined;

  afterEach(async () => {
    await stack?.close();
    stack = undefined;
    await link?.close();
    link = undefined;
  });

  it('holds the writes that arrive meanwhile and sends them once it is back: 2xx, content as written', async () => {
    const zookeeper = inject('zookeeperConnect');
    link = await TcpForwarder.start(zookeeper);
    stack = await startWriteStack({
      zookeeper,
      zookeeperPerProxy: [link.connectString],
      settings: { zookeeper: { sessionTimeoutMs: 4_000, connectionRetry: 3, connectionDelayMs: 500 }, lock: { foregroundTimeoutMs: 5_000, backgroundTimeoutMs: 5_000 } },
    });
    const [url] = stack.urls;
    const proxy = stack.proxies[0]!;
    const warm = await exchange(`${url}/blip/_doc/warm`, { method: 'PUT', body: '{"n":0}' });
    expect(warm.kind === 'answered' ? warm.answer.status : warm.error).toBe(201);

    // The link breaks; the client's reconnection is held unanswered until the blip ends.
    link.freeze();
    link.dropAll();
    await waitUntil(() => proxy.locks.state() === 'suspended', 2_000, 'link seen down');
    const singles = ['warm', 'a', 'b'].map((id, n) => exchange(`${url}/blip/_doc/${id}`, { method: 'PUT', body: JSON.stringify({ n: n + 1, id }) }));
    const bulkBody = ['{"index":{"_index":"blip","_id":"c"}}', '{"id":"c"}', '{"index":{"_index":"blip","_id":"d"}}', '{"id":"d"}', ''].join('\n');
    const bulk = exchange(`${url}/_bulk`, { method: 'POST', body: bulkBody, headers: { 'content-type': 'application/x-ndjson' } });
    await new Promise((resolve) => setTimeout(resolve, BLIP_MS));
    expect(proxy.locks.state()).toBe('suspended');
    link.unfreeze();

    const answers = await Promise.all([...singles, bulk]);
    expect(answers.map((outcome) => (outcome.kind === 'answered' ? outcome.answer.status : outcome.error))).toEqual([200, 201, 201, 200]);
    const bulkAnswer = answers[3];
    expect(bulkAnswer?.kind === 'answered' && JSON.parse(bulkAnswer.answer.body).errors).toBe(false);
    const documents = stack.standIn.documents('blip');
    expect(documents.get('warm')?.source).toEqual({ n: 1, id: 'warm' });
    expect(documents.get('a')?.source).toEqual({ n: 2, id: 'a' });
    expect(documents.get('b')?.source).toEqual({ n: 3, id: 'b' });
    expect(documents.get('c')?.source).toEqual({ id: 'c' });
    expect(documents.get('d')?.source).toEqual({ id: 'd' });
  });
});
