import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mayWriteForeground } from '../../../src/auth/foreground-rights.js';
import { principalName, principalOf, type Principal } from '../../../src/auth/principal.js';
import { OTHER_PRINCIPALS, PrincipalLabels, UNKNOWN_PRINCIPAL } from '../../../src/auth/principal-labels.js';
import { PrincipalShare } from '../../../src/auth/principal-share.js';
import { refusalFor } from '../../../src/auth/refusal-answer.js';

const ALICE: Principal = { username: 'alice', roles: ['interactive', 'writer'], apiKeyName: null, apiKeyId: null, authenticationType: 'realm' };
const INGEST_KEY: Principal = { username: 'batch', roles: ['writer'], apiKeyName: 'ingest', apiKeyId: 'k1', authenticationType: 'api_key' };

describe('principals', () => {
  it('reads _authenticate answers, an API key being its own principal', () => {
    const body = Buffer.from(JSON.stringify({ username: 'batch', roles: ['writer'], authentication_type: 'api_key', api_key: { id: 'k1', name: 'ingest' } }));
    expect(principalOf(body)).toEqual(INGEST_KEY);
    expect(principalName(INGEST_KEY)).toBe('batch/ingest');
    expect(principalName(ALICE)).toBe('alice');
    expect(principalOf(Buffer.from('{"error":{}}'))).toBeNull();
    expect(principalOf(Buffer.from('not json'))).toBeNull();
  });

  it('foreground rights: users, roles, API key names, and kinds', () => {
    expect(mayWriteForeground([], null)).toBe(true);
    expect(mayWriteForeground(['alice'], ALICE)).toBe(true);
    expect(mayWriteForeground(['interactive'], ALICE)).toBe(true);
    expect(mayWriteForeground(['role:interactive'], ALICE)).toBe(true);
    expect(mayWriteForeground(['user:interactive'], ALICE)).toBe(false);
    expect(mayWriteForeground(['ingest'], INGEST_KEY)).toBe(true);
    expect(mayWriteForeground(['api_key:ingest'], ALICE)).toBe(false);
    expect(mayWriteForeground(['batch-ui'], INGEST_KEY)).toBe(false);
    expect(mayWriteForeground(['alice'], null)).toBe(false);
  });

  it('metric labels stay bounded whatever the number of principals', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 300 }), fc.integer({ min: 1, max: 20 }), (names, max) => {
        const labels = new PrincipalLabels(max);
        const seen = new Set(names.map((name) => labels.labelOf(name)));
        seen.delete(OTHER_PRINCIPALS);
        expect(seen.size).toBeLessThanOrEqual(max);
        for (const name of names) expect([name, OTHER_PRINCIPALS]).toContain(labels.labelOf(name));
      }),
    );
    expect(new PrincipalLabels().labelOf(null)).toBe(UNKNOWN_PRINCIPAL);
  });

  it('a share admits up to its bound and takes releases back once each', () => {
    const share = new PrincipalShare();
    const first = share.enter('alice', 2);
    const second = share.enter('alice', 2);
    expect(share.enter('alice', 2)).toBeNull();
    expect(share.enter('bob', 2)).not.toBeNull();
    first?.();
    first?.();
    expect(share.count('alice')).toBe(1);
    expect(share.enter('alice', 2)).not.toBeNull();
    second?.();
    expect(share.enter('carol', 0)).not.toBeNull();
  });

  it('a relayed 401 names the write’s URI as the cluster would have', () => {
    const body = Buffer.from(JSON.stringify({ error: { reason: 'missing authentication credentials for REST request [/_security/_authenticate]' }, status: 401 }));
    const relayed = refusalFor('/idx/_doc/"1"', { status: 401, headers: {}, rawHeaders: [], body, upstreamHost: 'es' });
    expect(JSON.parse(relayed.body.toString())).toEqual({ error: { reason: 'missing authentication credentials for REST request [/idx/_doc/"1"]' }, status: 401 });
  });
});
