import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockInspectionRouter } from '../../../src/http/admin/lock-inspection-router.js';
import type { HeldLock, LockEngine, LockKey } from '../../../src/lock/lock-engine.js';
import { capturingLogger, startAdminTestServer, type AdminTestServer } from './admin-test-server.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startTestLockEngines } from './test-lock-engine.js';

const TOKEN = 's3cret-admin-token';
const HOLDER = { host: 'proxy-a', pid: 4242, requestId: 'holder-1' };
const WAITER = { host: 'proxy-b', pid: 4343, requestId: 'waiter-1' };

interface Fixture {
  readonly engine: LockEngine;
  /** A second engine plays a second proxy instance waiting for the same document. */
  readonly otherEngine: LockEngine;
  readonly server: AdminTestServer;
  readonly logLines: Record<string, unknown>[];
}

let fixture: Fixture;
let adminToken: string | null;
let cleanups: (() => Promise<void>)[];
// Every test locks its own index so that a leftover lock of another test can never answer for it.
let testIndex = 0;

describe.each(LOCK_BACKENDS)('the lock admin routes ($name locks)', (backend) => {
  beforeEach(async () => {
    cleanups = [];
    adminToken = null;
    testIndex += 1;
    const { engine, otherEngine } = await startTestLockEngines(backend);
    cleanups.push(() => engine.close());
    cleanups.push(() => otherEngine.close());
    const { logger, lines } = capturingLogger();
    const server = await startAdminTestServer(lockInspectionRouter({ locks: engine, adminToken: () => adminToken, logger }));
    cleanups.push(() => server.close());
    fixture = { engine, otherEngine, server, logLines: lines };
  });

  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  function index(): string {
    return `admin-it-${process.pid}-${testIndex}`;
  }

  function hold(key: LockKey, engine: LockEngine = fixture.engine): Promise<HeldLock> {
    return engine.acquire(key, 'foreground', { timeoutMs: 10_000, owner: HOLDER, message: `PUT /${key.index}/_doc/${key.id}` });
  }

  async function getJson(path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown; contentType: string | null }> {
    const response = await fetch(`${fixture.server.baseUrl}${path}`, init);
    return { status: response.status, body: await response.json(), contentType: response.headers.get('content-type') };
  }

  /** Polls until `check` passes: queue entries appear asynchronously in another engine. */
  async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (check(value) || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  function deleteLock(key: LockKey, authorization?: string): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    return getJson(`/locks/${encodeURIComponent(key.index)}/${encodeURIComponent(key.id)}`, { method: 'DELETE', headers });
  }

  describe('GET /locks/{index}/{id}', () => {
    it('shows the holder and the queue of a document held while another acquire waits', async () => {
      const key = { index: index(), id: 'order/17' };
      const held = await hold(key);
      const waiting = fixture.otherEngine.acquire(key, 'background', { timeoutMs: 20_000, owner: WAITER });
      try {
        const path = `/locks/${key.index}/order%2F17`;
        const { status, body, contentType } = await eventually(
          () => getJson(path),
          (answer) => JSON.stringify(answer.body).includes('"queue":[{'),
        );
        expect(status).toBe(200);
        expect(contentType).toMatch(/^application\/json/);
        expect(body).toMatchObject({
          key,
          holder: { owner: HOLDER, priority: 'foreground', message: `PUT /${key.index}/_doc/order/17` },
          queue: [{ priority: 'background', owner: WAITER }],
        });
        const since = Date.parse(String((body as { holder: { since: string } }).holder.since));
        expect(Math.abs(Date.now() - since)).toBeLessThan(60_000);
        const [waiter] = (body as { queue: { entry: unknown }[] }).queue;
        expect(typeof waiter?.entry).toBe('string');
      } finally {
        await held.release();
        await (await waiting).release();
      }
    });

    it('answers an unheld document with no holder and an empty queue', async () => {
      const { status, body } = await getJson(`/locks/${index()}/nobody`);
      expect(status).toBe(200);
      expect(body).toEqual({ key: { index: index(), id: 'nobody' }, holder: null, queue: [] });
    });

    it('refuses a path that is not /locks/{index}/{id} in Elasticsearch error shape', async () => {
      const { status, body } = await getJson(`/locks/${index()}/order/17`);
      expect(status).toBe(400);
      expect(body).toMatchObject({ status: 400, error: { type: 'illegal_argument_exception', root_cause: [{ type: 'illegal_argument_exception' }] } });
    });
  });

  describe('GET /locks?index=', () => {
    it('lists the held locks of one index, bounded by limit', async () => {
      const held = await Promise.all(['a', 'b', 'c'].map((id) => hold({ index: index(), id })));
      const elsewhere = await hold({ index: `${index()}-other`, id: 'a' });
      try {
        const all = await getJson(`/locks?index=${index()}`);
        expect(all.status).toBe(200);
        const listed = all.body as { index: string; limit: number; truncated: boolean; locks: { key: LockKey; holder: unknown }[] };
        expect(listed).toMatchObject({ index: index(), limit: 100, truncated: false });
        expect(listed.locks.map((lock) => lock.key.id).sort()).toEqual(['a', 'b', 'c']);
        expect(listed.locks.every((lock) => lock.key.index === index() && lock.holder !== null)).toBe(true);

        const bounded = await getJson(`/locks?index=${index()}&limit=2`);
        expect(bounded.body).toMatchObject({ limit: 2, truncated: true });
        expect((bounded.body as { locks: unknown[] }).locks).toHaveLength(2);
      } finally {
        await Promise.all([...held, elsewhere].map((lock) => lock.release()));
      }
    });

    it('needs an index and a valid limit', async () => {
      const missing = await getJson('/locks');
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ status: 400, error: { type: 'illegal_argument_exception' } });
      expect(JSON.stringify(missing.body)).toContain('index');
      const badLimit = await getJson(`/locks?index=${index()}&limit=-3`);
      expect(badLimit.status).toBe(400);
      const capped = await getJson(`/locks?index=${index()}&limit=5000`);
      expect(capped.body).toMatchObject({ limit: 1000, locks: [] });
    });
  });

  describe('DELETE /locks/{index}/{id}', () => {
    it('is refused while no admin token is configured, even with a bearer token', async () => {
      const key = { index: index(), id: 'stuck' };
      const held = await hold(key);
      try {
        const { status, body } = await deleteLock(key, `Bearer ${TOKEN}`);
        expect(status).toBe(403);
        expect(body).toMatchObject({ status: 403, error: { type: 'security_exception' } });
        expect(held.lost.aborted).toBe(false);
        expect((await fixture.engine.inspect(key)).holder).not.toBeNull();
      } finally {
        await held.release();
      }
    });

    it('is refused with a wrong or missing token', async () => {
      adminToken = TOKEN;
      const key = { index: index(), id: 'stuck' };
      const held = await hold(key);
      try {
        for (const authorization of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, TOKEN, undefined]) {
          const { status, body } = await deleteLock(key, authorization);
          expect(status).toBe(403);
          expect(body).toMatchObject({ error: { type: 'security_exception' } });
        }
        expect(held.lost.aborted).toBe(false);
        expect(fixture.logLines.some((line) => line.msg === 'lock force release refused')).toBe(true);
      } finally {
        await held.release();
      }
    });

    it('force-releases with the right token: the holder loses the lock, a waiter gets it, the act is logged', async () => {
      adminToken = TOKEN;
      const key = { index: index(), id: 'stuck/1' };
      const held = await hold(key);
      const lostSeen = new Promise<unknown>((resolve) => held.lost.addEventListener('abort', () => resolve(held.lost.reason), { once: true }));
      const waiting = fixture.otherEngine.acquire(key, 'foreground', { timeoutMs: 20_000, owner: WAITER });
      try {
        const { status, body } = await deleteLock(key, `Bearer ${TOKEN}`);
        expect(status).toBe(200);
        expect(body).toMatchObject({ released: true, key, holder: { owner: HOLDER, priority: 'foreground' } });
        await lostSeen;
        expect(held.lost.aborted).toBe(true);
        const successor = await waiting;
        try {
          expect(successor.key).toEqual(key);
          expect((await fixture.engine.inspect(key)).holder?.owner).toEqual(WAITER);
        } finally {
          await successor.release();
        }
        const logged = fixture.logLines.find((line) => line.msg === 'lock force-released by an operator');
        expect(logged?.level).toBe(40);
        expect(logged).toMatchObject({
          admin: { remoteAddress: expect.stringMatching(/127\.0\.0\.1/), key, previousHolder: { owner: HOLDER } },
        });
        expect(JSON.stringify(fixture.logLines)).not.toContain(TOKEN);
      } finally {
        await held.release();
      }
    });

    it('answers 404 when nothing was held', async () => {
      adminToken = TOKEN;
      const { status, body } = await deleteLock({ index: index(), id: 'free' }, `Bearer ${TOKEN}`);
      expect(status).toBe(404);
      expect(body).toMatchObject({ status: 404, error: { type: 'resource_not_found_exception' } });
    });
  });
});
