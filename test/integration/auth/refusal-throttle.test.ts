import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import type { RefusalThrottleSettings } from '../../../src/auth/auth-settings.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { BACKGROUND } from '../write/write-client.js';
import { ALICE, SECURITY, securedSettings, WRONG_PASSWORD } from './security-fixture.js';

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One write through `agent` (a keep-alive agent with one socket: every write on the same connection). */
function put(agent: Agent, base: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const { hostname, port } = new URL(base);
  const body = JSON.stringify({ n: 1 });
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname, port: Number(port), method: 'PUT', path, agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...BACKGROUND, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function oneConnection(): Agent {
  return new Agent({ keepAlive: true, maxSockets: 1 });
}

/** The throttle's counter for `action`, from the proxy's metrics. */
async function throttled(stack: WriteStack, action: 'delayed' | 'closed'): Promise<number> {
  const text = (await stack.proxies[0]!.metrics.render()).body;
  const line = text.split('\n').find((row) => row.startsWith(`es_lock_proxy_auth_refusals_throttled_total{action="${action}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

const LONG = 60_000;

describe('refused credentials: repeated refusals on one connection are throttled, never lost', () => {
  let stack: WriteStack | undefined;
  const agents: Agent[] = [];
  afterEach(async () => {
    for (const agent of agents.splice(0)) agent.destroy();
    await stack?.close();
    stack = undefined;
  });

  async function start(throttle: Partial<RefusalThrottleSettings>, auth: { refusalTtlMs?: number } = {}): Promise<WriteStack> {
    const defaults = { delayAfter: 2, delayMs: LONG, delayMaxMs: LONG, closeAfter: 0 };
    stack = await startWriteStack({
      zookeeper: inject('zookeeperConnect'),
      standIn: { security: SECURITY },
      settings: securedSettings({ ...auth, refusalThrottle: { ...defaults, ...throttle } }),
    });
    return stack;
  }

  function agent(): Agent {
    const made = oneConnection();
    agents.push(made);
    return made;
  }

  it('the first refusals are answered at once; the next one waits while other connections are served, and its connection alone', async () => {
    const proxy = await start({});
    const flooder = agent();
    const first = await put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD);
    expect(first.status).toBe(401);
    expect((await put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD)).status).toBe(401);
    let settled = false;
    const third = put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD).finally(() => (settled = true));
    third.catch(() => undefined);
    await vi.waitFor(async () => expect(await throttled(proxy, 'delayed')).toBe(1));
    // Another connection: a writer is served, and a typo'd password gets its 401 at once.
    expect((await put(agent(), proxy.urls[0]!, '/throttle/_doc/2', ALICE)).status).toBe(201);
    expect((await put(agent(), proxy.urls[0]!, '/throttle/_doc/3', WRONG_PASSWORD)).status).toBe(401);
    expect(settled).toBe(false);
    expect(proxy.standIn.document('throttle', '2')?.source).toEqual({ n: 1 });
    expect(proxy.standIn.document('throttle', '1')).toBeUndefined();
  });

  it('a delayed refusal is answered with the same 401 once its delay ends', async () => {
    const proxy = await start({ delayAfter: 1, delayMs: 20, delayMaxMs: 40 });
    const flooder = agent();
    const answers: Answer[] = [];
    for (let n = 0; n < 4; n++) answers.push(await put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD));
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 401]);
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
    expect(answers[3]!.headers['www-authenticate']).toEqual(answers[0]!.headers['www-authenticate']);
    expect(await throttled(proxy, 'delayed')).toBe(3);
  });

  it('a write whose credentials are accepted ends the streak: the next refusal on that connection is answered at once', async () => {
    const proxy = await start({ delayAfter: 1 });
    const client = agent();
    expect((await put(client, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD)).status).toBe(401);
    expect((await put(client, proxy.urls[0]!, '/throttle/_doc/1', ALICE)).status).toBe(201);
    expect((await put(client, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD)).status).toBe(401);
    expect(await throttled(proxy, 'delayed')).toBe(0);
  });

  it('refusals the cluster itself answers (nothing cached) are throttled the same way', async () => {
    const proxy = await start({ delayAfter: 1 }, { refusalTtlMs: 0 });
    const flooder = agent();
    expect((await put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD)).status).toBe(401);
    let settled = false;
    put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD)
      .finally(() => (settled = true))
      .catch(() => undefined);
    await vi.waitFor(async () => expect(await throttled(proxy, 'delayed')).toBe(1));
    expect((await put(agent(), proxy.urls[0]!, '/throttle/_doc/2', ALICE)).status).toBe(201);
    expect(settled).toBe(false);
  });

  it('closes the connection after its answer to the closeAfter-th refusal in a row', async () => {
    const proxy = await start({ delayAfter: 10, closeAfter: 3 });
    const flooder = agent();
    const sockets = new Set<unknown>();
    flooder.on('free', (socket) => sockets.add(socket));
    expect((await put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD)).headers.connection).toBe('keep-alive');
    expect((await put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD)).headers.connection).toBe('keep-alive');
    const third = await put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD);
    expect(third.status).toBe(401);
    expect(third.headers.connection).toBe('close');
    expect(await throttled(proxy, 'closed')).toBe(1);
    // The next write needs a new connection, whose refusals start over.
    expect((await put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD)).headers.connection).toBe('keep-alive');
    expect(sockets.size).toBe(2);
  });

  it('delayMaxMs=0 turns the delays off', async () => {
    const proxy = await start({ delayAfter: 0, delayMaxMs: 0 });
    const flooder = agent();
    for (let n = 0; n < 5; n++) expect((await put(flooder, proxy.urls[0]!, '/throttle/_doc/1', WRONG_PASSWORD)).status).toBe(401);
    expect(await throttled(proxy, 'delayed')).toBe(0);
  });
});
