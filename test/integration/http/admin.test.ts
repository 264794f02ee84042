import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import type { LockEngine, LockServiceState } from '../../../src/lock/lock-engine.js';
import { jsonOf, rawRequest } from '../../support/http-request.js';
import { startProxyHarness, type ProxyHarness } from '../../support/proxy-harness.js';

/** Only `state()` is consulted by readiness; everything else must never be called here. */
function lockEngineIn(state: { current: LockServiceState }): LockEngine {
  const unused = (): never => {
    throw new Error('not used by readiness');
  };
  return {
    acquire: unused,
    acquireEach: unused,
    activity: unused,
    inspect: unused,
    listHeld: unused,
    forceRelease: unused,
    state: () => state.current,
    onStateChange: () => () => {},
    close: async () => {},
  };
}

describe('admin listener', () => {
  let harness: ProxyHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('answers /healthz and /readyz (probing the upstream with HEAD /)', async () => {
    harness = await startProxyHarness();
    const health = await rawRequest(harness.adminUrl, { path: '/healthz' });
    expect(health.status).toBe(200);
    expect(jsonOf(health)).toEqual({ status: 'ok' });
    expect((await rawRequest(harness.adminUrl, { path: '/readyz' })).status).toBe(200);
    expect(harness.standIn.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['HEAD /']);
  });

  it('answers /readyz 503 with a reason when the upstream is down, while /healthz stays 200', async () => {
    harness = await startProxyHarness();
    await harness.standIn.refuseConnections();
    const notReady = await rawRequest(harness.adminUrl, { path: '/readyz' });
    expect(notReady.status).toBe(503);
    expect(jsonOf(notReady)).toMatchObject({ status: 'not_ready', reasons: [expect.stringMatching(/^elasticsearch: no Elasticsearch node could be reached/)] });
    expect((await rawRequest(harness.adminUrl, { path: '/healthz' })).status).toBe(200);
  });

  it('requires a connected lock service when one is attached', async () => {
    const state: { current: LockServiceState } = { current: 'suspended' };
    harness = await startProxyHarness({ deps: { lockEngine: lockEngineIn(state) } });
    const notReady = await rawRequest(harness.adminUrl, { path: '/readyz' });
    expect(notReady.status).toBe(503);
    expect(jsonOf(notReady)).toEqual({ status: 'not_ready', reasons: ['zookeeper: lock service is suspended'] });
    state.current = 'connected';
    expect((await rawRequest(harness.adminUrl, { path: '/readyz' })).status).toBe(200);
  });

  it('takes extra named readiness checks (e.g. draining)', async () => {
    let draining = false;
    harness = await startProxyHarness();
    harness.proxy.readiness.add({ name: 'draining', check: async () => (draining ? 'shutting down' : null) });
    expect((await rawRequest(harness.adminUrl, { path: '/readyz' })).status).toBe(200);
    draining = true;
    expect(jsonOf(await rawRequest(harness.adminUrl, { path: '/readyz' }))).toEqual({ status: 'not_ready', reasons: ['draining: shutting down'] });
  });

  it('mounts extra admin routers before the 404', async () => {
    const router = express.Router();
    router.get('/_locks', (_req, res) => void res.json({ locks: [] }));
    harness = await startProxyHarness({ deps: { adminRouters: [router] } });
    expect(jsonOf(await rawRequest(harness.adminUrl, { path: '/_locks' }))).toEqual({ locks: [] });
    expect((await rawRequest(harness.adminUrl, { path: '/healthz' })).status).toBe(200);
  });

  it('has no Elasticsearch paths: anything else is a JSON 404', async () => {
    harness = await startProxyHarness();
    const response = await rawRequest(harness.adminUrl, { path: '/_search' });
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(harness.standIn.requests).toHaveLength(0);
  });
});
