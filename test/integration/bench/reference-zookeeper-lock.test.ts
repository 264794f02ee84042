import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { numberField, spawnBenchChild, type BenchChild } from '../../../bench/child-process.js';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';
import { isZkCode } from '../../../src/zookeeper-client/zk-errors.js';
import { REFERENCE_LOCK_ROOT } from '../../../bench/reference-zookeeper-lock.js';


/**
 * The bench's floor for a ZooKeeper-locked write (`bare_zk_lock_write_*` in `open-loop`) is only
 * a floor if the reference proxy really takes the lock before it forwards and gives it back after
 * the answer: a reference that skipped ZooKeeper would make the proxy look slow by comparison.
 */
describe('the bench reference proxy with the least ZooKeeper lock', () => {
  let zk: RawZkConnection;
  let upstream: Server;
  let reference: BenchChild<{ port: number }>;
  /** For each request the upstream saw: its path, and whether the document's privateLock existed then. */
  const seen: { path: string; locked: boolean }[] = [];

  const lockNode = (index: string, id: string): string => `${REFERENCE_LOCK_ROOT}/${encodeURIComponent(`${index}/${id}`)}/privateLock`;

  async function exists(path: string): Promise<boolean> {
    try {
      await zk.client.get(path);
      return true;
    } catch (error) {
      if (isZkCode(error, 'NONODE')) return false;
      throw error;
    }
  }

  beforeAll(async () => {
    zk = await connectRawClient(inject('zookeeperConnect'), 10_000);
    upstream = createServer((req, res) => {
      req.resume();
      const match = /^\/([^/]+)\/_doc\/([^/?]+)/.exec(req.url ?? '');
      const checked = match === null ? Promise.resolve(false) : exists(lockNode(match[1]!, match[2]!));
      void checked.then((locked) => {
        seen.push({ path: req.url ?? '', locked });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"result":"created"}');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    reference = await spawnBenchChild(
      './reference-proxy-process.ts',
      { upstream: `http://127.0.0.1:${port}`, client: 'node-http', zookeeper: inject('zookeeperConnect') },
      (line) => ({ port: numberField(line, 'port') }),
    );
  });

  afterAll(async () => {
    await reference.stop();
    upstream.close();
    await zk.close();
  });

  it('holds the document lock while the write is upstream and deletes it once answered', async () => {
    const index = `ref-${Date.now().toString(36)}`;
    const answer = await fetch(`http://127.0.0.1:${reference.info.port}/${index}/_doc/1`, { method: 'PUT', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ result: 'created' });
    expect(seen.find((request) => request.path === `/${index}/_doc/1`)).toEqual({ path: `/${index}/_doc/1`, locked: true });
    await vi.waitFor(async () => expect(await exists(lockNode(index, '1'))).toBe(false));
    expect(await exists(`${REFERENCE_LOCK_ROOT}/${encodeURIComponent(`${index}/1`)}`)).toBe(false);
  });

  it('gives the lock back when the client left while the lock was being taken', async () => {
    const index = `ref-gone-${Date.now().toString(36)}`;
    const document = `${REFERENCE_LOCK_ROOT}/${encodeURIComponent(`${index}/1`)}`;
    // The test holds the document first: the reference's acquisition waits for it.
    await zk.client.multi([
      { type: 'create', path: document, mode: 'container' },
      { type: 'create', path: `${document}/privateLock`, data: 'test', mode: 'ephemeral' },
    ]);
    const leaving = request({ host: '127.0.0.1', port: reference.info.port, method: 'PUT', path: `/${index}/_doc/1`, headers: { 'content-type': 'application/json' } });
    const closed = new Promise<void>((resolve) => leaving.once('close', resolve));
    // Sent in full (the reference reads it and waits for the lock) before the client leaves.
    const sent = new Promise<void>((resolve) => leaving.once('finish', resolve));
    leaving.on('error', () => undefined);
    leaving.end('{"a":1}');
    await sent;
    leaving.destroy();
    await closed;
    await zk.client.delete(`${document}/privateLock`);
    // Taken after the client left: given back at once, never forwarded.
    await vi.waitFor(async () => expect(await exists(document)).toBe(false), { timeout: 5_000 });
    expect(seen.some((seenRequest) => seenRequest.path === `/${index}/_doc/1`)).toBe(false);
  });
});
