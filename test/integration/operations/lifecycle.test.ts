import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { send } from '../write/write-client.js';
import { propertiesText, startProxyProcess, type ProxyProcess } from './proxy-process.js';
import { listZnodes } from '../../support/zookeeper-ensemble.js';
import { LOCK_BACKENDS, ZOOKEEPER_LOCKS } from '../../support/lock-backends.js';

const zookeeper = (): string => inject('zookeeperConnect');

describe.each(LOCK_BACKENDS)('a proxy process: shutdown and live tuning ($name locks)', (locks) => {
  let standIn: EsStandIn | undefined;
  let proxy: ProxyProcess | undefined;
  afterEach(async () => {
    await proxy?.cleanup();
    await standIn?.stop();
    proxy = undefined;
    standIn = undefined;
  });

  async function start(extra: Record<string, string> = {}): Promise<{ standIn: EsStandIn; proxy: ProxyProcess; lockRoot: string }> {
    standIn = await startEsStandIn();
    const lockRoot = `/ops-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    proxy = await startProxyProcess({ 'elasticsearch.hosts': standIn.url, ...locks.processProperties(lockRoot), ...extra });
    return { standIn, proxy, lockRoot };
  }

  it('SIGTERM lets in-flight writes finish, reports not ready while draining, leaves no lock znodes, exits 0', async () => {
    const { standIn, proxy, lockRoot } = await start();
    const gate = standIn.gate((request) => request.writeKeys.length > 0);
    const writes = ['a', 'b', 'c', 'd/e', 'f'].map((id) => send(proxy.url, 'PUT', `/products/_doc/${encodeURIComponent(id)}`, { id }));
    await gate.arrived(5);
    const held = (await (await fetch(`${proxy.adminUrl}/locks?index=products`)).json()) as { locks: { key: { id: string } }[] };
    expect(held.locks.map((lock) => lock.key.id).sort()).toEqual(['a', 'b', 'c', 'd/e', 'f']);
    if (locks === ZOOKEEPER_LOCKS) expect((await listZnodes(zookeeper(), lockRoot)).lockNodes.length).toBeGreaterThanOrEqual(5);

    proxy.child.kill('SIGTERM');
    await proxy.waitForLog((entry) => entry.msg === 'es-lock-proxy shutting down');
    const readiness = await fetch(`${proxy.adminUrl}/readyz`);
    expect(readiness.status).toBe(503);
    expect(await readiness.text()).toContain('draining');
    await expect(fetch(`${proxy.url}/products/_doc/late`, { method: 'PUT', body: '{}' })).rejects.toThrow();

    gate.release();
    const statuses = (await Promise.all(writes)).map((response) => response.status);
    expect(statuses).toEqual([201, 201, 201, 201, 201]);
    expect(await proxy.exited).toBe(0);
    if (locks === ZOOKEEPER_LOCKS) expect((await listZnodes(zookeeper(), lockRoot)).lockNodes).toEqual([]);
    expect(standIn.documents('products').size).toBe(5);
  });

  it('SIGHUP applies a new foreground timeout to the next request; an invalid file keeps the running settings', async () => {
    const { standIn, proxy } = await start({ 'zookeeper.foregound.task.timeout': '30000' });
    const gate = standIn.gateDocument('products', 'hot');
    const holder = send(proxy.url, 'PUT', '/products/_doc/hot', { writer: 'holder' });
    await gate.arrived(1);

    const original = await readFile(proxy.configFile, 'utf8');
    await writeFile(proxy.configFile, original.replace('zookeeper.foregound.task.timeout=30000', 'zookeeper.foregound.task.timeout=200'));
    proxy.child.kill('SIGHUP');
    const reloaded = await proxy.waitForLog((entry) => entry.msg === 'configuration reloaded');
    expect(JSON.stringify(reloaded)).toContain('zookeeper.foregound.task.timeout');

    const started = Date.now();
    const timedOut = await send(proxy.url, 'PUT', '/products/_doc/hot', { writer: 'impatient' });
    expect(timedOut.status).toBe(429);
    expect(Date.now() - started).toBeLessThan(10_000);

    await writeFile(proxy.configFile, `${propertiesText({ 'proxy.listen.port': 'not-a-port' })}`);
    proxy.child.kill('SIGHUP');
    const refused = await proxy.waitForLog((entry) => entry.msg === 'configuration not reloaded: the running settings stay');
    expect(String(refused.error)).toContain('proxy.listen.port=not-a-port');
    expect((await send(proxy.url, 'PUT', '/products/_doc/hot', { writer: 'still-200ms' })).status).toBe(429);

    gate.release();
    expect((await holder).status).toBe(201);
  });
});
