import { afterEach, describe, expect, it } from 'vitest';
import { CLOCK_MARGIN_MS, settledName, steadyName } from '../../../src/classify/date-math/steady-name.js';
import { expectNoLocksLeft, ndjson, NDJSON, startWritePath, until, type WritePathHarness } from './write-harness.js';

const MIDNIGHT = Date.UTC(2026, 11, 5);
const DAILY = '<d-{now/d}>';

let harness: WritePathHarness | undefined;
afterEach(async () => {
  await harness?.engine.close();
  harness = undefined;
});

describe('steadyName', () => {
  it('is the name when no boundary lies within the margin, null when one does', () => {
    expect(steadyName(DAILY, MIDNIGHT - 2 * CLOCK_MARGIN_MS, CLOCK_MARGIN_MS)).toBe('d-2026.12.04');
    expect(steadyName(DAILY, MIDNIGHT - CLOCK_MARGIN_MS / 2, CLOCK_MARGIN_MS)).toBeNull();
    expect(steadyName(DAILY, MIDNIGHT + CLOCK_MARGIN_MS / 2, CLOCK_MARGIN_MS)).toBeNull();
    expect(steadyName(DAILY, MIDNIGHT + 2 * CLOCK_MARGIN_MS, CLOCK_MARGIN_MS)).toBe('d-2026.12.05');
    expect(steadyName('plain', MIDNIGHT, CLOCK_MARGIN_MS)).toBe('plain');
  });
});

describe('settledName', () => {
  it('waits out a boundary within the margin, then names the new period', async () => {
    let now = MIDNIGHT - 100;
    const waits: number[] = [];
    const name = await settledName(DAILY, () => now, CLOCK_MARGIN_MS, async (ms) => {
      waits.push(ms);
      now += ms;
    });
    expect(name).toBe('d-2026.12.05');
    expect(waits).toEqual([2 * CLOCK_MARGIN_MS]);
  });

  it('refuses a name that changes faster than the margin (seconds in it)', async () => {
    const failure = await settledName('<s-{now{HH.mm.ss}}>', () => MIDNIGHT, CLOCK_MARGIN_MS, async () => undefined).catch((error: unknown) => error);
    expect(failure).toMatchObject({ kind: 'unsupported', message: expect.stringContaining('changes within 1000 ms') });
  });
});

describe('a single write whose lock wait crosses a boundary of its date-math name', () => {
  it('is locked again under the new name before it is forwarded', async () => {
    let now = MIDNIGHT - 10_000;
    harness = startWritePath({}, { wallClock: () => now });
    const blocker = await harness.block('d-2026.12.04', '1');
    const write = harness.start('PUT', `/${encodeURIComponent(DAILY)}/_doc/1`, { body: { v: 1 } });
    await until(async () => (await harness!.queueLength('d-2026.12.04', '1')) === 1);
    now = MIDNIGHT + 2 * CLOCK_MARGIN_MS;
    await blocker.release();
    await write.done;
    expect(write.res.statusCode).toBe(201);
    expect(harness.timeline.filter((entry) => !entry.includes('blocker'))).toEqual([
      'grant d-2026.12.04/1',
      'release d-2026.12.04/1',
      'grant d-2026.12.04/1',
      'release d-2026.12.04/1',
      'grant d-2026.12.05/1',
      'send#1 <d-{now/d}>/1',
      'answer#1',
      'release d-2026.12.05/1',
    ]);
    expect(harness.reports.map((report) => report.outcome)).toEqual(['retried', 'acquired']);
    await expectNoLocksLeft(harness);
  });
});

describe('a bulk with date-math `_index` names', () => {
  it('is refused whole (400, nothing forwarded) when a name is valid for Elasticsearch but not evaluated by the proxy', async () => {
    harness = startWritePath({}, { wallClock: () => MIDNIGHT - 3_600_000 });
    const body = ndjson([{ index: { _index: '<w-{now/d{YYYY.ww}}>', _id: '1' } }, { v: 1 }, { index: { _index: 'plain', _id: '2' } }, { v: 2 }]);
    const res = await harness.write('POST', '/_bulk', { body, headers: NDJSON });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, error: { type: 'illegal_argument_exception', reason: expect.stringContaining('[YYYY]') } });
    expect(harness.forwarder.calls).toHaveLength(0);
  });

  it('sends an item Elasticsearch refuses (invalid date math) without a lock and locks the others on their concrete names', async () => {
    harness = startWritePath({}, { wallClock: () => MIDNIGHT - 3_600_000 });
    const body = ndjson([{ index: { _index: '<d-{now/d>', _id: '1' } }, { v: 1 }, { index: { _index: DAILY, _id: '2' } }, { v: 2 }]);
    const res = await harness.write('POST', '/_bulk', { body, headers: NDJSON });
    expect(res.statusCode).toBe(200);
    expect(harness.timeline.filter((entry) => entry.startsWith('grant'))).toEqual(['grant d-2026.12.04/2']);
    await expectNoLocksLeft(harness);
  });

  it('answers an item whose lock wait crossed a boundary of its name with a retryable 429, never sent under the old name', async () => {
    let now = MIDNIGHT - 10_000;
    harness = startWritePath({}, { wallClock: () => now });
    const blocker = await harness.block('d-2026.12.04', '1');
    const body = ndjson([{ index: { _index: DAILY, _id: '1' } }, { v: 1 }, { index: { _index: 'plain', _id: '2' } }, { v: 2 }]);
    const write = harness.start('POST', '/_bulk', { body, headers: { ...NDJSON, 'x-lock-type': 'foreground' } });
    await until(async () => (await harness!.queueLength('d-2026.12.04', '1')) === 1);
    now = MIDNIGHT + 2 * CLOCK_MARGIN_MS;
    await blocker.release();
    await write.done;
    expect(write.res.statusCode).toBe(200);
    const items = (write.res.json() as { items: Record<string, { status: number; error?: { type: string } }>[] }).items.map((item) => Object.values(item)[0]);
    expect(items.map((item) => item?.status)).toEqual([429, 201]);
    expect(items[0]?.error?.type).toBe('date_math_boundary_exception');
    expect(harness.timeline.filter((entry) => entry.startsWith('send'))).toEqual(['send#1 plain/2']);
    await expectNoLocksLeft(harness);
  });
});

