import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { parseBulkBody } from '../../../src/classify/bulk-parser.js';
import { classifyRoute } from '../../../src/classify/route-parser.js';
import { statusFor } from '../../../src/errors/error-codes.js';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import type { LockKey } from '../../../src/lock/lock-engine.js';
import { aliasLookupOf } from '../../../src/write/alias-lookup.js';
import { AliasResolver } from '../../../src/write/alias-resolver.js';
import { concreteIndexOf, dateMathSpellings, modelAliasApi, namesWritingTo, type AliasMember, type ClusterModel } from './reference/elasticsearch-documents.js';
import { startWritePath, type WritePathHarness } from './write-harness.js';

/**
 * The property of the lock keys (docs/requests-and-responses.md): two requests Elasticsearch
 * applies to the same document — per the reference model (reference/elasticsearch-documents.ts) —
 * get the same lock key, however they name it: directly, through an alias, through a data stream,
 * by date math, percent-encoded, as a single write, a bulk's `_index` or a bulk's path.
 */
const RUNS = { numRuns: 300 };

const INDICES = ['logs-000001', 'logs-000002', 'logs-000003', 'plain'];
const BACKING = ['.ds-events-2024.01.01-000001', '.ds-events-2024.01.02-000002'];
const ALIASES = ['logs', 'all-logs', 'current', 'zz-write'];

const aliasArbitrary = fc
  .subarray(INDICES, { minLength: 1 })
  .chain((members) => fc.tuple(fc.constant(members), fc.array(fc.constantFrom<boolean | null>(true, false, null), { minLength: members.length, maxLength: members.length })))
  .map(([members, flags]): AliasMember[] => {
    // Elasticsearch allows one write index per alias: the first `true` stays, later ones become `false`.
    let written = false;
    return members.map((index, n) => {
      const flag = flags[n] ?? null;
      const isWriteIndex = flag === true && written ? false : flag;
      if (flag === true) written = true;
      return { index, isWriteIndex };
    });
  });

const modelArbitrary: fc.Arbitrary<ClusterModel> = fc.dictionary(fc.constantFrom(...ALIASES), aliasArbitrary, { maxKeys: ALIASES.length }).map((aliases) => ({
  indices: [...INDICES, ...BACKING],
  aliases: new Map(Object.entries(aliases)),
  dataStreams: new Map([['events', BACKING]]),
}));

/** Per character: percent-encode it, and with lower-case hex digits (cycled over longer names). */
type Spelling = readonly (readonly [boolean, boolean])[];
const spellingArbitrary: fc.Arbitrary<Spelling> = fc.array(fc.tuple(fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 48 });

/** `name` with the chosen characters percent-encoded (and those that must be): the same name once decoded. */
function spell(name: string, spelling: Spelling): string {
  return [...name]
    .map((char, n) => {
      const [encode, lower] = spelling[n % spelling.length] ?? [false, false];
      if (!encode && encodeURIComponent(char) === char) return char;
      const encoded = [...Buffer.from(char, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
      return lower ? encoded.toLowerCase() : encoded;
    })
    .join('');
}

type Form = 'single' | 'bulk-index' | 'bulk-path';

/** The lock key the proxy takes for a write of `id` through `name` spelled `spelled`, in `form`. */
async function keyOf(resolver: AliasResolver, form: Form, name: string, spelled: string, op: 'index' | 'create', id: string): Promise<LockKey> {
  if (form === 'single') {
    const route = classifyRoute('PUT', `/${spelled}/${op === 'create' ? '_create' : '_doc'}/${encodeURIComponent(id)}`, {});
    if (route.kind !== 'single') throw new Error(`not a single write: ${spelled}`);
    return { index: await resolver.lockIndexFor(route.index), id: route.id };
  }
  const action = { [op]: form === 'bulk-index' ? { _index: name, _id: id } : { _id: id } };
  const body = Buffer.from(`${JSON.stringify(action)}\n{"v":1}\n`);
  const route = classifyRoute('POST', form === 'bulk-index' ? '/_bulk' : `/${spelled}/_bulk`, {});
  if (route.kind !== 'bulk') throw new Error(`not a bulk: ${spelled}`);
  const [item] = parseBulkBody(body, route.defaultIndex);
  if (item?.id === null || item === undefined) throw new Error('no item');
  return { index: await resolver.lockIndexFor(item.index), id: item.id };
}

function resolverOver(model: ClusterModel, nowMs = Date.UTC(2026, 11, 4, 12)): AliasResolver {
  return new AliasResolver({ lookup: aliasLookupOf(modelAliasApi(model)), ttlMs: () => 60_000, capacity: 100, concurrency: 4, wallClock: () => nowMs });
}

const formArbitrary = fc.constantFrom<Form>('single', 'bulk-index', 'bulk-path');
const idArbitrary = fc.string({ minLength: 1, maxLength: 8 }).filter((id) => !/[\ud800-\udfff]/.test(id));

describe('lock keys against the reference model of Elasticsearch’s documents', () => {
  it('gives two requests that write one document the same key: directly, through its aliases, its data stream, any spelling, any form', async () => {
    await fc.assert(
      fc.asyncProperty(
        modelArbitrary,
        fc.constantFrom(...INDICES, BACKING[1]!),
        idArbitrary,
        fc.nat(),
        fc.nat(),
        formArbitrary,
        formArbitrary,
        spellingArbitrary,
        spellingArbitrary,
        async (model, index, id, first, second, firstForm, secondForm, spellingA, spellingB) => {
          const names = namesWritingTo(model, index);
          const a = names[first % names.length]!;
          const b = names[second % names.length]!;
          expect(concreteIndexOf(model, a.name, a.op)).toBe(concreteIndexOf(model, b.name, b.op));
          const [spelledA, spelledB] = [spell(a.name, spellingA), spell(b.name, spellingB)];
          const resolver = resolverOver(model);
          const keyA = await keyOf(resolver, firstForm, a.name, spelledA, a.op, id);
          // A second proxy, with its own cache, keys it alike.
          const keyB = await keyOf(resolverOver(model), secondForm, b.name, spelledB, b.op, id);
          expect(keyA).toEqual(keyB);
        },
      ),
      RUNS,
    );
  });

  it('gives a date-math name and the concrete name it resolves to the same key', async () => {
    const steadyInstant = fc.date({ min: new Date(Date.UTC(2000, 0, 1)), max: new Date(Date.UTC(2099, 11, 31)), noInvalidDate: true }).map((date) => {
      // Away from every quarter-hour boundary by more than the proxy's clock margin (steady-name.ts).
      const ms = date.getTime();
      return ms - (ms % 900_000) + 450_000;
    });
    await fc.assert(
      fc.asyncProperty(
        steadyInstant,
        fc.integer({ min: -48, max: 56 }).map((quarters) => quarters * 15),
        fc.constantFrom('metrics-', 'a.b_c-', 'x'),
        idArbitrary,
        formArbitrary,
        formArbitrary,
        fc.nat(),
        spellingArbitrary,
        spellingArbitrary,
        async (nowMs, offsetMinutes, prefix, id, firstForm, secondForm, pick, spellingA, spellingB) => {
          const spellingsAtNow = dateMathSpellings(prefix, nowMs, offsetMinutes);
          const { expression, concrete } = spellingsAtNow[pick % spellingsAtNow.length]!;
          const model: ClusterModel = { indices: [concrete], aliases: new Map(), dataStreams: new Map() };
          const resolver = resolverOver(model, nowMs);
          const keyA = await keyOf(resolver, firstForm, expression, spell(expression, spellingA), 'index', id);
          const keyB = await keyOf(resolver, secondForm, concrete, spell(concrete, spellingB), 'index', id);
          expect(keyA).toEqual(keyB);
          expect(keyA.index).toBe(concrete);
        },
      ),
      RUNS,
    );
  });
});

describe('a document write is never forwarded without its lock', () => {
  let harness: WritePathHarness | undefined;
  afterEach(async () => {
    await harness?.engine.close();
    harness = undefined;
  });

  const nameArbitrary = fc.oneof(
    fc.constantFrom('plain', '<d-{now/d}>', '<d-{now/d{yyyy.MM.dd|+01:00}}>', '<bad-{now/d>', '<x}>', '<{now/d{YYYY.ww}}>', '<a\\{b\\}-{now-1M/M}>'),
    fc.stringMatching(/^<[a-z{}\\/|+:.\-nowdyMH0-9]{0,16}>$/),
  );

  it('forwards a single write only while it holds a lock, or answers 4xx and forwards nothing', async () => {
    await fc.assert(
      fc.asyncProperty(nameArbitrary, fc.constantFrom('PUT', 'DELETE'), async (name, method) => {
        harness = startWritePath({}, { wallClock: () => Date.UTC(2026, 11, 4, 12) });
        let route;
        try {
          route = classifyRoute(method, `/${encodeURIComponent(name)}/_doc/1`, { 'content-type': 'application/json' });
        } catch (error) {
          expect(error).toBeInstanceOf(ProxyError);
          return;
        }
        if (route.kind === 'passthrough') return;
        const res = await harness.write(method, `/${encodeURIComponent(name)}/_doc/1`, method === 'PUT' ? { body: { v: 1 } } : {});
        const sent = harness.timeline.findIndex((entry) => entry.startsWith('send#'));
        if (sent < 0) {
          expect(res.statusCode).toBeGreaterThanOrEqual(400);
          expect(res.statusCode).toBeLessThan(500);
        } else {
          expect(harness.timeline.slice(0, sent).some((entry) => entry.startsWith('grant '))).toBe(true);
        }
        await harness.engine.close();
        harness = undefined;
      }),
      { numRuns: 150 },
    );
  });

  it('refuses a date-math name it cannot evaluate with a client error', () => {
    expect(statusFor('DATE_MATH_INVALID')).toBe(400);
    expect(statusFor('DATE_MATH_UNSUPPORTED')).toBe(400);
  });
});
