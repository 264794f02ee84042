import { describe, expect, it, vi } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { AliasResolver, aliasesOfAnswer, lockIndexOf, type AliasLookup, type NameAliases } from '../../../src/write/alias-resolver.js';

const PLAIN: NameAliases = { isAlias: false, writeAliases: [], writeIndex: 'new-index' };

function resolver(lookup: AliasLookup, options: { capacity?: number; concurrency?: number } = {}): AliasResolver {
  return new AliasResolver({ lookup, ttlMs: () => 60_000, capacity: options.capacity ?? 100, concurrency: options.concurrency ?? 4 });
}

describe('lockIndexOf', () => {
  it.each([
    ['a name that does not exist yet', null, 'new-index'],
    ['an alias (keyed on itself)', { isAlias: true, writeAliases: [], writeIndex: 'new-index-000001' }, 'new-index'],
    ['a plain index', PLAIN, 'new-index'],
    ['the write index of aliases (the smallest alias name)', { isAlias: false, writeAliases: ['logs-b', 'logs-a'], writeIndex: 'new-index' }, 'logs-a'],
  ])('keys %s', (_case, aliases, expected) => {
    expect(lockIndexOf('new-index', aliases)).toBe(expected);
  });
});

describe('aliasesOfAnswer', () => {
  it('recognises an alias: the answer lists other indices than the name', () => {
    expect(aliasesOfAnswer('logs', { 'logs-000001': { aliases: { logs: { is_write_index: true } } } })).toEqual({ isAlias: true, writeAliases: [], writeIndex: 'logs-000001' });
  });

  it('lists the aliases an index can be written through, not those marked is_write_index false', () => {
    const body = { 'logs-000001': { aliases: { logs: {}, old: { is_write_index: false }, current: { is_write_index: true } } } };
    expect(aliasesOfAnswer('logs-000001', body)).toEqual({ isAlias: false, writeAliases: ['logs', 'current'], writeIndex: 'logs-000001' });
  });
});

describe('AliasResolver', () => {
  it('looks a name up once for concurrent writes and then answers from the cache', async () => {
    const lookup = vi.fn<AliasLookup>(async () => ({ isAlias: false, writeAliases: ['logs'], writeIndex: 'logs-1' }));
    const aliases = resolver(lookup);
    expect(await Promise.all([aliases.lockIndexFor('logs-1'), aliases.lockIndexFor('logs-1')])).toEqual(['logs', 'logs']);
    expect(await aliases.lockIndexFor('logs-1')).toBe('logs');
    expect(lookup).toHaveBeenCalledTimes(1);
  });

  it('fails a write whose look-up failed (503 alias_resolution_exception) and does not cache the failure', async () => {
    const lookup = vi.fn<AliasLookup>().mockRejectedValueOnce(new Error('connect ECONNREFUSED')).mockResolvedValue(PLAIN);
    const aliases = resolver(lookup);
    const failure = await aliases.lockIndexFor('logs').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProxyError);
    expect(failure).toMatchObject({ code: 'ALIAS_RESOLUTION_FAILED', message: expect.stringContaining('connect ECONNREFUSED') });
    expect(await aliases.lockIndexFor('logs')).toBe('logs');
    expect(lookup).toHaveBeenCalledTimes(2);
  });

  it('runs at most `concurrency` look-ups at once', async () => {
    let inFlight = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const aliases = resolver(
      async () => {
        most = Math.max(most, ++inFlight);
        await new Promise<void>((resolve) => releases.push(resolve));
        inFlight--;
        return PLAIN;
      },
      { concurrency: 2 },
    );
    const all = Promise.all(['a', 'b', 'c', 'd', 'e'].map((name) => aliases.lockIndexFor(name)));
    for (let served = 0; served < 5; served++) {
      await vi.waitFor(() => expect(releases.length).toBeGreaterThan(served), { interval: 2 });
      releases[served]!();
    }
    expect(await all).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(most).toBe(2);
  });

  it('keeps only the most recently used names', async () => {
    const lookup = vi.fn<AliasLookup>(async () => PLAIN);
    const aliases = resolver(lookup, { capacity: 2 });
    for (const name of ['a', 'b', 'a', 'c']) await aliases.lockIndexFor(name);
    expect(aliases.size).toBe(2);
    expect(lookup).toHaveBeenCalledTimes(3);
    await aliases.lockIndexFor('a');
    expect(lookup).toHaveBeenCalledTimes(3);
    await aliases.lockIndexFor('b');
    expect(lookup).toHaveBeenCalledTimes(4);
  });
});
