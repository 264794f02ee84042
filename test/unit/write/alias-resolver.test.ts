import { describe, expect, it, vi } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { aliasesOfAnswer, dataStreamCandidateOf } from '../../../src/write/alias-lookup.js';
import { AliasResolver, lockIndexOf, type AliasLookup, type NameAliases } from '../../../src/write/alias-resolver.js';

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
    ['an index a rollover left behind (is_write_index false)', { isAlias: false, writeAliases: [], formerWriteAliases: ['logs-b', 'logs-a'], writeIndex: 'new-index' }, 'logs-a'],
    ['a write alias before a former one', { isAlias: false, writeAliases: ['logs-z'], formerWriteAliases: ['logs-a'], writeIndex: 'new-index' }, 'logs-z'],
    ['a backing index (on its data stream)', { isAlias: false, writeAliases: [], dataStream: 'events', writeIndex: 'new-index' }, 'events'],
  ])('keys %s', (_case, aliases, expected) => {
    expect(lockIndexOf('new-index', aliases)).toBe(expected);
  });
});

describe('dataStreamCandidateOf', () => {
  it.each([
    ['.ds-logs-app-2024.01.01-000001', 'logs-app'],
    ['.ds-events-000003', 'events'],
    ['.ds-logs-2024.01.01', null],
    ['logs-2024.01.01-000001', null],
  ])('reads %s as a backing index of %s (Elasticsearch’s backing index names)', (index, stream) => {
    expect(dataStreamCandidateOf(index)).toBe(stream);
  });
});

describe('aliasesOfAnswer', () => {
  it('recognises an alias: the answer lists other indices than the name', () => {
    expect(aliasesOfAnswer('logs', { 'logs-000001': { aliases: { logs: { is_write_index: true } } } }, () => 1)).toEqual({ isAlias: true, writeAliases: [], writeIndex: 'logs-000001', writeIndexRouting: null });
  });

  it('lists the aliases whose write index the index is: flagged true, or unflagged with no other index', () => {
    const body = { 'logs-000001': { aliases: { logs: {}, old: { is_write_index: false }, current: { is_write_index: true } } } };
    expect(aliasesOfAnswer('logs-000001', body, () => 1)).toEqual({ isAlias: false, writeAliases: ['logs', 'current'], formerWriteAliases: ['old'], writeIndex: 'logs-000001' });
  });

  it('does not list an unflagged alias with several indices (a read alias): Elasticsearch has no write index for it', () => {
    const body = { 'logs-000001': { aliases: { logs: { is_write_index: true }, 'all-logs': {} } } };
    const answer = aliasesOfAnswer('logs-000001', body, (alias) => (alias === 'all-logs' ? 2 : 1));
    expect(answer.writeAliases).toEqual(['logs']);
    expect(lockIndexOf('logs-000001', answer)).toBe('logs');
  });

  it('reads an alias’s index_routing on its write index', () => {
    const body = { 'logs-000001': { aliases: { logs: { is_write_index: false, index_routing: 'old' } } }, 'logs-000002': { aliases: { logs: { is_write_index: true, index_routing: 'r1' } } } };
    expect(aliasesOfAnswer('logs', body, () => 2)).toMatchObject({ writeIndex: 'logs-000002', writeIndexRouting: 'r1' });
  });

  it('gives an alias whose only index is flagged false no write index', () => {
    expect(aliasesOfAnswer('logs', { 'logs-000001': { aliases: { logs: { is_write_index: false } } } }, () => 1).writeIndex).toBeNull();
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

  describe('a name written steadily', () => {
    const TTL_MS = 1_000;
    const START = 10_000;
    const ALIASED: NameAliases = { isAlias: false, writeAliases: ['logs'], writeIndex: 'logs-1' };

    /** A resolver on a clock the test moves, with the look-ups it was asked for, each answered by the test. */
    function onClock(): { aliases: AliasResolver; clock: { now: number }; asked: ((answer: NameAliases | Error) => void)[] } {
      // Not 0: lru-cache takes an entry stored at time 0 for one without a TTL.
      const clock = { now: START };
      const asked: ((answer: NameAliases | Error) => void)[] = [];
      const lookup: AliasLookup = () =>
        new Promise((resolve, reject) => asked.push((answer) => (answer instanceof Error ? reject(answer) : resolve(answer))));
      const aliases = new AliasResolver({ lookup, ttlMs: () => TTL_MS, capacity: 100, concurrency: 4, now: () => clock.now });
      return { aliases, clock, asked };
    }

    async function firstAnswer(aliases: AliasResolver, asked: ((answer: NameAliases | Error) => void)[]): Promise<void> {
      const first = aliases.lockIndexFor('logs-1');
      await vi.waitFor(() => expect(asked).toHaveLength(1), { interval: 1 });
      asked[0]!(PLAIN);
      expect(await first).toBe('logs-1');
    }

    /** A first answer, then a write in the last fifth of its life: answered from the cache, a look-up out in the background. */
    async function agingWithLookUpOut(): Promise<ReturnType<typeof onClock>> {
      const setup = onClock();
      await firstAnswer(setup.aliases, setup.asked);
      setup.clock.now = START + 850;
      expect(await setup.aliases.lockIndexFor('logs-1')).toBe('logs-1');
      await vi.waitFor(() => expect(setup.asked, 'a look-up in the background').toHaveLength(2), { interval: 1 });
      return setup;
    }

    it('is looked up again in the background in the last fifth of the life of its answer, so no write waits for the look-up', async () => {
      const { aliases, clock, asked } = await agingWithLookUpOut();
      // Answered from the cache while the new look-up is still out: the writes do not wait for it.
      expect(await Promise.all([aliases.lockIndexFor('logs-1'), aliases.lockIndexFor('logs-1')])).toEqual(['logs-1', 'logs-1']);
      expect(asked, 'one look-up in the background for every write meanwhile').toHaveLength(2);
      asked[1]!(ALIASED);
      await vi.waitFor(async () => expect(await aliases.lockIndexFor('logs-1')).toBe('logs'), { interval: 1 });
      // Past the first answer's life, within the new one's: answered with no more look-ups.
      clock.now = START + 1_100;
      expect(await aliases.lockIndexFor('logs-1')).toBe('logs');
      expect(asked).toHaveLength(2);
    });

    it('never uses an answer past its life: a write after it waits for a look-up of its own when the one in the background has not answered', async () => {
      const { aliases, clock, asked } = await agingWithLookUpOut();
      clock.now = START + 1_001;
      let answered = false;
      const late = aliases.lockIndexFor('logs-1').then((index) => ((answered = true), index));
      await vi.waitFor(() => expect(asked).toHaveLength(3), { interval: 1 });
      expect(answered, 'the expired answer is not used').toBe(false);
      asked[2]!(ALIASED);
      expect(await late).toBe('logs');
      // The background look-up, started before the write's own, answers last: it does not replace the newer answer.
      asked[1]!(PLAIN);
      await new Promise((resolve) => setImmediate(resolve));
      clock.now = START + 1_050;
      expect(await aliases.lockIndexFor('logs-1')).toBe('logs');
    });

    it('lets a write waiting for its own look-up have that answer when the background one answers first', async () => {
      const { aliases, clock, asked } = await agingWithLookUpOut();
      clock.now = START + 1_001;
      const late = aliases.lockIndexFor('logs-1');
      await vi.waitFor(() => expect(asked).toHaveLength(3), { interval: 1 });
      asked[1]!(PLAIN);
      asked[2]!(ALIASED);
      expect(await late).toBe('logs');
    });

    it('keeps the answer until its life ends when the background look-up fails, then looks up again in the foreground', async () => {
      const { aliases, clock, asked } = await agingWithLookUpOut();
      asked[1]!(new Error('connect ECONNREFUSED'));
      clock.now = START + 950;
      // A failed refresh is tried again on the next use, the answer still in its life meanwhile.
      await vi.waitFor(async () => {
        expect(await aliases.lockIndexFor('logs-1')).toBe('logs-1');
        expect(asked).toHaveLength(3);
      }, { interval: 1 });
      asked[2]!(new Error('connect ECONNREFUSED'));
      clock.now = START + 1_001;
      const failure = aliases.lockIndexFor('logs-1').catch((error: unknown) => error);
      await vi.waitFor(() => expect(asked.length).toBeGreaterThanOrEqual(4), { interval: 1 });
      asked[asked.length - 1]!(new Error('connect ECONNREFUSED'));
      expect(await failure).toMatchObject({ code: 'ALIAS_RESOLUTION_FAILED' });
    });
  });
});
