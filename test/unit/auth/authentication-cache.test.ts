import { describe, expect, it } from 'vitest';
import { AuthenticationCache } from '../../../src/auth/authentication-cache.js';
import type { CredentialVerdict } from '../../../src/auth/cluster-authentication.js';
import { CredentialKeys } from '../../../src/auth/credential-key.js';
import type { UpstreamResponse } from '../../../src/elasticsearch/upstream-forwarder.js';

const ANSWER: UpstreamResponse = { status: 401, headers: {}, rawHeaders: [], body: Buffer.from('{}'), upstreamHost: 'es' };
const ALICE: CredentialVerdict = { kind: 'authenticated', principal: { username: 'alice', roles: [], apiKeyName: null, apiKeyId: null, authenticationType: 'realm' } };

function cacheAnswering(verdict: () => CredentialVerdict, ttls: { ttlMs?: number; refusalTtlMs?: number } = {}) {
  const asked: string[][] = [];
  let release: () => void = () => undefined;
  let held = false;
  const cache = new AuthenticationCache({
    ask: async (credentials) => {
      asked.push([...credentials]);
      if (held) await new Promise<void>((resolve) => (release = resolve));
      return verdict();
    },
    size: 2,
    ttlMs: () => ttls.ttlMs ?? 60_000,
    refusalTtlMs: () => ttls.refusalTtlMs ?? 60_000,
  });
  return { cache, asked, hold: () => (held = true), release: () => release() };
}

describe('AuthenticationCache', () => {
  it('asks once for concurrent checks of one credential, then answers from memory', async () => {
    const { cache, asked, hold, release } = cacheAnswering(() => ALICE);
    hold();
    const checks = [cache.verdictFor(['Basic a', '']), cache.verdictFor(['Basic a', '']), cache.verdictFor(['Basic a', ''])];
    release();
    const verdicts = await Promise.all(checks);
    expect(asked).toHaveLength(1);
    expect(verdicts.map((v) => v.verdict.kind)).toEqual(['authenticated', 'authenticated', 'authenticated']);
    expect((await cache.verdictFor(['Basic a', ''])).cached).toBe(true);
    expect(asked).toHaveLength(1);
  });

  it('keeps a refusal only for the refusal ttl, and never an answer that is neither', async () => {
    let verdict: CredentialVerdict = { kind: 'refused', answer: ANSWER };
    const { cache, asked } = cacheAnswering(() => verdict, { refusalTtlMs: 0 });
    await cache.verdictFor(['Basic b', '']);
    await cache.verdictFor(['Basic b', '']);
    expect(asked).toHaveLength(2);
    verdict = { kind: 'unanswered', answer: { ...ANSWER, status: 503 } };
    await cache.verdictFor(['Basic c', '']);
    await cache.verdictFor(['Basic c', '']);
    expect(asked).toHaveLength(4);
    expect(cache.size).toBe(0);
  });

  it('is bounded: the least recently used credential is asked about again', async () => {
    const { cache, asked } = cacheAnswering(() => ALICE);
    for (const credential of ['1', '2', '3', '1']) await cache.verdictFor([credential, '']);
    expect(asked.map(([credential]) => credential)).toEqual(['1', '2', '3', '1']);
    expect(cache.size).toBe(2);
  });

  it('a failed question is not kept: the next check asks again', async () => {
    let fail = true;
    const cache = new AuthenticationCache({
      ask: async () => {
        if (fail) throw new Error('unreachable');
        return ALICE;
      },
      size: 10,
      ttlMs: () => 60_000,
      refusalTtlMs: () => 1000,
    });
    await expect(cache.verdictFor(['x', ''])).rejects.toThrow('unreachable');
    fail = false;
    expect((await cache.verdictFor(['x', ''])).verdict.kind).toBe('authenticated');
  });
});

describe('CredentialKeys', () => {
  it('keys never contain the credentials, differ per process secret, and separate the headers', () => {
    const header = 'Basic YWxpY2U6c2VjcmV0';
    const one = new CredentialKeys();
    const key = one.keyOf([header, '']);
    expect(key).not.toContain(header);
    expect(key).not.toContain('YWxpY2U6c2VjcmV0');
    expect(one.keyOf([header, ''])).toBe(key);
    expect(new CredentialKeys().keyOf([header, ''])).not.toBe(key);
    expect(one.keyOf(['ab', 'c'])).not.toBe(one.keyOf(['a', 'bc']));
  });
});
