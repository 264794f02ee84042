import { afterEach, describe, expect, it } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import type { ForwardOutcome } from '../../../src/elasticsearch/upstream-forwarder.js';
import { freePort } from '../../support/free-port.js';
import { jsonOf, rawRequest } from '../../support/http-request.js';
import { STAND_IN, startProxyHarness, type ProxyHarness } from '../../support/proxy-harness.js';

/**
 * `ForwardRequest.beforeSend` (DESIGN §4): called at the moment the request is handed to an
 * established upstream connection; a non-null answer sends nothing. The write path uses it to
 * check a lock at that instant, so a lock lost while a connect was pending forwards nothing.
 */
describe('beforeSend at socket hand-over', () => {
  let harness: ProxyHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  /** A write path that forwards with `hook` and records the outcome. */
  async function start(hosts: readonly string[], hook: () => ProxyError | null): Promise<{ outcomes: ForwardOutcome[] }> {
    const outcomes: ForwardOutcome[] = [];
    harness = await startProxyHarness({
      hosts,
      deps: {
        createWriteInterceptor: ({ forwarder }) => async (request) => {
          const rawHeaders = request.req.rawHeaders;
          outcomes.push(await forwarder.pipe({ method: 'PUT', url: request.req.url ?? '/', rawHeaders, body: request.body, beforeSend: hook }, request.res));
        },
      },
    });
    return { outcomes };
  }

  const put = (url: string, id: string) =>
    rawRequest(url, { method: 'PUT', path: `/idx/_doc/${id}`, headers: { 'content-type': 'application/json' }, body: '{"a":1}' });

  it('runs once the connection is up (after a refused host, not before) and a veto sends nothing', async () => {
    const refusing = `http://127.0.0.1:${await freePort()}`;
    let calls = 0;
    let veto = false;
    const { outcomes } = await start([refusing, STAND_IN], () => {
      calls += 1;
      return veto ? new ProxyError('LOCK_LOST', 'lock lost before forwarding') : null;
    });
    const standIn = harness?.standIn;
    if (harness === undefined || standIn === undefined) throw new Error('no harness');

    expect((await put(harness.proxyUrl, '1')).status).toBe(201);
    expect(calls).toBe(1); // the refused host never got as far as a hand-over

    veto = true;
    const vetoed = await put(harness.proxyUrl, '2');
    expect(vetoed.status).toBe(503);
    expect(jsonOf(vetoed)).toMatchObject({ error: { type: 'lock_service_unavailable_exception', reason: 'lock lost before forwarding' } });
    expect(outcomes[1]).toMatchObject({ status: 503, reachedUpstream: false, error: { code: 'LOCK_LOST' } });
    expect(standIn.requests.map((r) => r.url)).toEqual(['/idx/_doc/1']);
  });

  it('runs at the hand-over of a kept-alive connection too, and the next request still goes through', async () => {
    const answers: (ProxyError | null)[] = [null, new ProxyError('LOCK_LOST', 'lock lost before forwarding'), null];
    const { outcomes } = await start([STAND_IN], () => answers.shift() ?? null);
    if (harness === undefined) throw new Error('no harness');
    expect((await put(harness.proxyUrl, '1')).status).toBe(201);
    expect((await put(harness.proxyUrl, '2')).status).toBe(503);
    expect((await put(harness.proxyUrl, '3')).status).toBe(201);
    expect(outcomes.map((outcome) => outcome.reachedUpstream)).toEqual([true, false, true]);
    expect(harness.standIn.requests.map((r) => r.url)).toEqual(['/idx/_doc/1', '/idx/_doc/3']);
  });
});
