import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { WWW_AUTHENTICATE, type EsStandIn } from '../../support/es-stand-in.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ZkWireTap } from '../../support/zk-wire-tap.js';
import { FOREGROUND, send } from '../write/write-client.js';
import { ALICE, apiKey, BATCH, lockCreates, SECURITY, securedSettings, warmUp, WRONG_PASSWORD } from './security-fixture.js';

function authenticateCalls(standIn: EsStandIn): number {
  return standIn.requests.filter((request) => request.url === '/_security/_authenticate').length;
}

/** The cluster's own answer to `request` sent to it directly (the oracle of a relayed refusal). */
async function directAnswer(standIn: EsStandIn, method: string, path: string, headers: Record<string, string>) {
  const response = await fetch(`${standIn.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: '{"n":1}' });
  return { status: response.status, challenges: response.headers.get('www-authenticate'), body: (await response.json()) as unknown };
}

describe('credentials are checked with the cluster before any lock (proxy.auth.verify=on)', () => {
  let tap: ZkWireTap;
  let stack: WriteStack;
  beforeAll(async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings({ verify: 'on' }) });
    await warmUp(stack, tap);
  });
  afterAll(async () => {
    await stack?.close();
    await tap?.close();
  });

  it.each([
    ['a wrong password', WRONG_PASSWORD],
    ['no credentials', {}],
    ['an unknown API key', apiKey('key-9', 'nope')],
  ])('a write with %s gets the cluster’s own 401 and WWW-Authenticate, takes no lock and never reaches the document', async (what, credentials) => {
    tap.resetCounts();
    const path = `/refused/_doc/${encodeURIComponent(what)}`;
    const answer = await send(stack.urls[0]!, 'PUT', path, { n: 1 }, { ...FOREGROUND, ...credentials });
    const direct = await directAnswer(stack.standIn, 'PUT', path, credentials);
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual(direct.body);
    expect(answer.headers.get('www-authenticate')).toBe(WWW_AUTHENTICATE.join(', '));
    expect(lockCreates(tap)).toBe(0);
    expect(stack.standIn.documents('refused').size).toBe(0);
    expect(stack.standIn.requests.filter((request) => request.url === path)).toHaveLength(1); // the direct one above
  });

  it('a bulk with wrong credentials takes no lock either', async () => {
    tap.resetCounts();
    const body = `${JSON.stringify({ index: { _index: 'refused-bulk', _id: '1' } })}\n{"n":1}\n`;
    const answer = await send(stack.urls[0]!, 'POST', '/_bulk', body, { 'content-type': 'application/x-ndjson', ...WRONG_PASSWORD });
    expect(answer.status).toBe(401);
    expect(lockCreates(tap)).toBe(0);
    expect(stack.standIn.documents('refused-bulk').size).toBe(0);
  });

  it.each([
    ['Basic', ALICE, 'alice'],
    ['ApiKey', apiKey('key-1', 'key-1-secret'), 'batch'],
    ['Bearer', { authorization: 'Bearer token-of-alice' }, 'alice'],
  ])('a write with valid %s credentials takes its lock and is applied', async (scheme, credentials) => {
    tap.resetCounts();
    const answer = await send(stack.urls[0]!, 'PUT', `/accepted/_doc/${scheme}`, { scheme }, credentials);
    expect(answer.status).toBe(201);
    expect(lockCreates(tap)).toBeGreaterThan(0);
    expect(stack.standIn.document('accepted', scheme)?.source).toEqual({ scheme });
  });

  it('concurrent writes with one credential share one check, and later ones use the cache', async () => {
    const before = authenticateCalls(stack.standIn);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => send(stack.urls[0]!, 'PUT', `/shared/_doc/${n}`, { n }, BATCH)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(201));
    await send(stack.urls[0]!, 'PUT', '/shared/_doc/10', { n: 10 }, BATCH);
    expect(authenticateCalls(stack.standIn) - before).toBe(1);
    expect(stack.standIn.documents('shared').size).toBe(11);
  });

  it('reads pass through untouched: no check by the proxy, the cluster answers them itself', async () => {
    const before = authenticateCalls(stack.standIn);
    const answer = await send(stack.urls[0]!, 'GET', '/accepted/_doc/Basic', undefined, WRONG_PASSWORD);
    expect(answer.status).toBe(401);
    expect(authenticateCalls(stack.standIn)).toBe(before);
  });
});

describe('credential check edges', () => {
  let stack: WriteStack | undefined;
  let tap: ZkWireTap | undefined;
  afterEach(async () => {
    await stack?.close();
    await tap?.close();
    stack = undefined;
    tap = undefined;
  });

  it('a revoked API key is refused once its accepted verdict has expired (proxy.auth.cache.ttl.ms)', async () => {
    stack = await startWriteStack({ zookeeper: inject('zookeeperConnect'), standIn: { security: SECURITY }, settings: securedSettings({ verify: 'on', cacheTtlMs: 300 }) });
    const key = apiKey('key-1', 'key-1-secret');
    expect((await send(stack.urls[0]!, 'PUT', '/revoked/_doc/1', { n: 1 }, key)).status).toBe(201);
    stack.standIn.security!.invalidateApiKey('key-1');
    await expect.poll(async () => (await send(stack!.urls[0]!, 'PUT', '/revoked/_doc/1', { n: 2 }, key)).status, { timeout: 10_000, interval: 100 }).toBe(401);
    expect(stack.standIn.document('revoked', '1')?.source).toEqual({ n: 1 });
  });

  it('the anonymous user writes without credentials where the cluster enables it', async () => {
    const security = { ...SECURITY, anonymous: { username: '_anonymous', roles: ['writer'] } };
    stack = await startWriteStack({ zookeeper: inject('zookeeperConnect'), standIn: { security }, settings: securedSettings({ verify: 'on' }) });
    expect((await send(stack.urls[0]!, 'PUT', '/anonymous/_doc/1', { n: 1 })).status).toBe(201);
    expect(stack.standIn.document('anonymous', '1')?.source).toEqual({ n: 1 });
  });

  it('a check that cannot reach the cluster answers as an unreachable cluster does: 502, nothing locked or sent', async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings({ verify: 'on' }) });
    await warmUp(stack, tap);
    await stack.standIn.refuseConnections();
    tap.resetCounts();
    // Credentials not checked yet: the check has to ask the cluster.
    const answer = await send(stack.urls[0]!, 'PUT', '/unreachable/_doc/1', { n: 1 }, BATCH);
    expect(answer.status).toBe(502);
    expect((answer.json.error as { type: string }).type).toBe('upstream_unreachable_exception');
    expect(lockCreates(tap)).toBe(0);
    await stack.standIn.acceptConnections();
    expect(stack.standIn.document('unreachable', '1')).toBeUndefined();
  });

  it('a check the cluster does not answer is bounded by proxy.auth.timeout.ms: 504, nothing locked or sent', async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings({ verify: 'on', timeoutMs: 300 }) });
    await warmUp(stack, tap);
    stack.standIn.injectFault({ kind: 'hang', match: (request) => request.url === '/_security/_authenticate' });
    tap.resetCounts();
    const answer = await send(stack.urls[0]!, 'PUT', '/hanging/_doc/1', { n: 1 }, BATCH);
    expect(answer.status).toBe(504);
    expect(answer.json).toMatchObject({ error: { type: 'upstream_timeout_exception' }, status: 504 });
    expect(lockCreates(tap)).toBe(0);
    expect(stack.standIn.requests.filter((request) => request.url.startsWith('/hanging/'))).toHaveLength(0);
  });

  it('auto: finds security on and refuses a write with wrong credentials before its lock', async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings({ verify: 'auto' }) });
    await warmUp(stack, tap);
    tap.resetCounts();
    expect((await send(stack.urls[0]!, 'PUT', '/auto/_doc/1', { n: 1 }, WRONG_PASSWORD)).status).toBe(401);
    expect(lockCreates(tap)).toBe(0);
    expect((await send(stack.urls[0]!, 'PUT', '/auto/_doc/1', { n: 2 }, ALICE)).status).toBe(201);
    expect(stack.standIn.document('auto', '1')?.source).toEqual({ n: 2 });
  });

  it('auto against a cluster without security: writes go as before, with no credential check', async () => {
    stack = await startWriteStack({ zookeeper: inject('zookeeperConnect'), settings: securedSettings({ verify: 'auto' }, { elasticsearch: { auth: null } }) });
    for (let n = 0; n < 3; n++) expect((await send(stack.urls[0]!, 'PUT', `/open/_doc/${n}`, { n }, FOREGROUND)).status).toBe(201);
    expect(stack.standIn.documents('open').size).toBe(3);
    expect(authenticateCalls(stack.standIn)).toBe(1); // the detection, once
  });

  it('a reload turns the checks on for the next write (proxy.auth.verify is live)', async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings({ verify: 'off' }) });
    const runtime = stack.proxies[0]!;
    const running = runtime.settings();
    const diff = runtime.reload({ ...running, proxy: { ...running.proxy, auth: { ...running.proxy.auth, verify: 'auto' } } });
    expect(diff.live.map((change) => change.key)).toEqual(['proxy.auth.verify']);
    await warmUp(stack, tap);
    tap.resetCounts();
    expect((await send(stack.urls[0]!, 'PUT', '/reloaded/_doc/1', { n: 1 }, WRONG_PASSWORD)).status).toBe(401);
    expect(lockCreates(tap)).toBe(0);
  });

  it('off: writes are forwarded with whatever credentials they carry, as without the check', async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings({ verify: 'off' }) });
    await warmUp(stack, tap);
    tap.resetCounts();
    expect((await send(stack.urls[0]!, 'PUT', '/off/_doc/1', { n: 1 }, WRONG_PASSWORD)).status).toBe(401);
    expect(authenticateCalls(stack.standIn)).toBe(0);
    expect(lockCreates(tap)).toBeGreaterThan(0);
    expect((await send(stack.urls[0]!, 'PUT', '/off/_doc/1', { n: 2 }, ALICE)).status).toBe(201);
  });
});


const PING = 11;

/** Every request the proxy sent to ZooKeeper but the session's pings. */
function requestsBesidePings(tap: ZkWireTap): number {
  return [...tap.requests].reduce((sum, [op, count]) => (op === PING ? sum : sum + count), 0);
}

/** A write whose head declares a 1 MiB body, sent with only its first bytes, the rest withheld: answered only by a server that does not wait for the body. */
function unfinishedWrite(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: unknown }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname, port: Number(port), method: 'PUT', path, agent: false, headers: { 'content-type': 'application/json', 'content-length': String(1024 * 1024), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
        });
      },
    );
    req.on('error', reject);
    req.write('{"n":');
  });
}

describe('credentials known to be refused are refused before the body is read', () => {
  let tap: ZkWireTap;
  let stack: WriteStack;
  beforeAll(async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    // A refusal kept long enough for the test; a body that stalls is answered 408 after 2 s.
    stack = await startWriteStack({
      zookeeper: tap.connectString,
      standIn: { security: SECURITY },
      settings: securedSettings({ verify: 'on', refusalTtlMs: 60_000 }),
      edge: { bodyIdleTimeoutMs: 2000 },
    });
    await warmUp(stack, tap);
  });
  afterAll(async () => {
    await stack?.close();
    await tap?.close();
  });

  it.each([
    ['a wrong password', WRONG_PASSWORD],
    ['no credentials', {}],
  ])('a write with %s, refused once, is answered the cluster’s 401 without its body, the connection closed, no lock, no ZooKeeper traffic', async (what, credentials) => {
    const path = `/unread/_doc/${encodeURIComponent(what)}`;
    expect((await send(stack.urls[0]!, 'PUT', path, { n: 1 }, { ...FOREGROUND, ...credentials })).status).toBe(401);
    const checks = authenticateCalls(stack.standIn);
    tap.resetCounts();
    const answer = await unfinishedWrite(stack.urls[0]!, path, { ...FOREGROUND, ...credentials });
    const direct = await directAnswer(stack.standIn, 'PUT', path, credentials);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(direct.body);
    expect(answer.headers['www-authenticate']).toBe(WWW_AUTHENTICATE.join(', '));
    expect(answer.headers.connection).toBe('close');
    expect(requestsBesidePings(tap)).toBe(0);
    expect(lockCreates(tap)).toBe(0);
    expect(authenticateCalls(stack.standIn)).toBe(checks);
    expect(stack.standIn.requests.filter((request) => request.url === path)).toHaveLength(1); // the direct one above
    expect(stack.standIn.documents('unread').size).toBe(0);
  });

  it('a small refused body is discarded unread, not inflated: the 401 comes back on a connection kept open', async () => {
    const path = '/unread/_doc/small';
    expect((await send(stack.urls[0]!, 'PUT', path, { n: 1 }, WRONG_PASSWORD)).status).toBe(401);
    tap.resetCounts();
    // Not gzip at all: inflating it would fail the request with 400 before any credential check.
    const agent = new Agent({ keepAlive: true });
    const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const { hostname, port } = new URL(stack.urls[0]!);
      const req = request(
        { hostname, port: Number(port), method: 'PUT', path, agent, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...WRONG_PASSWORD } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
        },
      );
      req.on('error', reject);
      req.end('not gzip');
    }).finally(() => agent.destroy());
    expect(answer.status).toBe(401);
    expect(answer.connection).toBe('keep-alive');
    expect(requestsBesidePings(tap)).toBe(0);
  });

  it('valid credentials still have their body read and written', async () => {
    expect((await send(stack.urls[0]!, 'PUT', '/unread/_doc/valid', { n: 2 }, ALICE)).status).toBe(201);
    expect(stack.standIn.document('unread', 'valid')?.source).toEqual({ n: 2 });
  });
});
