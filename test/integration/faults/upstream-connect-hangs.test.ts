import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { startTlsTerminator, type TlsTerminator } from '../../support/tls-terminator.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { exchange, isElasticsearchError, type Outcome } from './fault-kit.js';

const UPSTREAM_TIMEOUT_MS = 500;

function statusOf(outcome: Outcome): number {
  return outcome.kind === 'answered' ? outcome.answer.status : 0;
}

/**
 * Connecting to an Elasticsearch node happens under the write's lock. A node whose TLS handshake
 * never completes (a frozen link: the TCP connection is accepted, no byte comes back) is given up
 * after the connect timeout — the shorter of 10 s and `proxy.upstream.timeout.ms` — as unreachable:
 * nothing was sent, 502, and the lock is free for the next writer.
 */
describe.each(LOCK_BACKENDS)('an Elasticsearch node whose handshake hangs ($name locks)', (locks) => {
  let tls: TlsTerminator | undefined;
  let link: TcpForwarder | undefined;
  let stack: WriteStack;

  beforeAll(async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      upstream: async (standIn) => {
        tls = await startTlsTerminator(standIn.port);
        link = await TcpForwarder.start(`127.0.0.1:${tls.port}`);
        return `https://127.0.0.1:${link.port}`;
      },
      settings: {
        elasticsearch: { ssl: { caFile: null, verify: false } },
        proxy: { upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS, aliasCacheTtlMs: 600_000 },
        lock: { foregroundTimeoutMs: 5_000 },
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await link?.close();
    await tls?.close();
  });

  it('answers 502 upstream_unreachable_exception with nothing sent, and the next writer to the document proceeds', async () => {
    const [url = ''] = stack.urls;
    // The alias look-up is answered (and cached) before the link freezes: the write reaches its lock.
    // The index is made first: a name that does not exist yet is looked up again on its next write.
    await exchange(`http://127.0.0.1:${stack.standIn.port}/ch`, { method: 'PUT', body: '{}' });
    expect(statusOf(await exchange(`${url}/ch/_doc/warm`, { method: 'PUT', body: '{}' }))).toBe(201);
    const arrivedBefore = stack.standIn.requests.length;
    link?.dropAll();
    link?.freeze();
    let hung: Outcome;
    try {
      hung = await exchange(`${url}/ch/_doc/c1`, { method: 'PUT', body: '{"v":"hung"}' });
    } finally {
      link?.unfreeze();
    }
    expect(hung.kind).toBe('answered');
    if (hung.kind !== 'answered') return;
    expect(hung.answer.status).toBe(502);
    expect(isElasticsearchError(hung.answer, ['upstream_unreachable_exception']), hung.answer.body).toBe(true);
    expect(stack.standIn.requests.slice(arrivedBefore).filter((request) => request.url === '/ch/_doc/c1')).toHaveLength(0);

    expect(statusOf(await exchange(`${url}/ch/_doc/c1`, { method: 'PUT', body: '{"v":"next"}' }))).toBe(201);
    expect(stack.standIn.document('ch', 'c1')?.source).toEqual({ v: 'next' });
  });
});
