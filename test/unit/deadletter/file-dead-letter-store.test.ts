import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDeadLetterRecord, decodeDeadLetterBody, type DeadLetterInput } from '../../../src/deadletter/dead-letter-record.js';
import { FileDeadLetterStore, fileNameFor } from '../../../src/deadletter/file-dead-letter-store.js';

let root: string;
let dir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'dlq-'));
  dir = join(root, 'nested', 'dead-letters');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const input = (overrides: Partial<DeadLetterInput> = {}): DeadLetterInput => ({
  method: 'PUT',
  url: '/products/_doc/a%2Fb?refresh=true&routing=x',
  headers: {
    'content-type': 'application/json',
    authorization: 'Basic c2VjcmV0',
    cookie: 'sid=1',
    'x-api-key': 'k',
    'x-lock-type': 'background',
    host: 'proxy:9200',
    'content-length': '11',
    'x-opaque-id': ['a', 'b'],
  },
  body: Buffer.from('{"a":"é"}\n'),
  priority: 'background',
  keys: [{ index: 'products', id: 'a/b' }],
  attemptTimes: [Date.UTC(2026, 10, 21, 10, 0, 0), Date.UTC(2026, 10, 21, 10, 0, 5)],
  lastError: { code: 'LOCK_TIMEOUT', message: 'lock wait timed out' },
  ...overrides,
});

describe('createDeadLetterRecord', () => {
  it('keeps the request without credentials or hop-by-hop headers, flagging removed credentials', () => {
    const record = createDeadLetterRecord(input(), new Date(Date.UTC(2026, 10, 21, 10, 0, 6)));
    expect(record).toMatchObject({
      createdAt: '2026-11-21T10:00:06.000Z',
      method: 'PUT',
      path: '/products/_doc/a%2Fb',
      query: 'refresh=true&routing=x',
      headers: { 'content-type': 'application/json', 'x-lock-type': 'background', 'x-opaque-id': ['a', 'b'] },
      hadCredentials: true,
      body: { encoding: 'utf8', data: '{"a":"é"}\n' },
      priority: 'background',
      keys: [{ index: 'products', id: 'a/b' }],
      attempts: 2,
      attemptedAt: ['2026-11-21T10:00:00.000Z', '2026-11-21T10:00:05.000Z'],
      lastError: { code: 'LOCK_TIMEOUT', message: 'lock wait timed out' },
      replayedAt: null,
      replayStatus: null,
    });
    expect(Object.keys(record.headers)).not.toEqual(expect.arrayContaining(['authorization']));
    for (const secret of ['authorization', 'cookie', 'x-api-key', 'host', 'content-length']) expect(record.headers).not.toHaveProperty(secret);
    expect(record.id).toMatch(/^dlq-\d{13}-\d{6}-[0-9a-f]{8}$/);
  });

  it('says when no credentials were present', () => {
    expect(createDeadLetterRecord(input({ headers: { 'content-type': 'application/json' } })).hadCredentials).toBe(false);
  });

  it('stores non-UTF-8 bodies as base64 and gives the exact bytes back', () => {
    const bytes = Buffer.from([0xff, 0x00, 0xc3, 0x28, 0x0a]);
    const record = createDeadLetterRecord(input({ body: bytes }));
    expect(record.body.encoding).toBe('base64');
    expect(decodeDeadLetterBody(record.body).equals(bytes)).toBe(true);
    expect(decodeDeadLetterBody(createDeadLetterRecord(input()).body).toString()).toBe('{"a":"é"}\n');
  });

  it('makes ids that sort in creation order, also within one millisecond', () => {
    const at = new Date(Date.UTC(2026, 10, 21));
    const ids = Array.from({ length: 50 }, () => createDeadLetterRecord(input(), at).id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('FileDeadLetterStore', () => {
  it('creates the directory on first use and appends one JSON line per record to the UTC day file', async () => {
    const store = new FileDeadLetterStore(dir);
    const record = createDeadLetterRecord(input(), new Date('2026-11-21T23:59:59.999Z'));
    await store.append(record);
    const next = createDeadLetterRecord(input(), new Date('2026-11-22T00:00:00.000Z'));
    await store.append(next);
    expect((await readdir(dir)).sort()).toEqual(['dead-letter-2026-11-21.jsonl', 'dead-letter-2026-11-22.jsonl']);
    const text = await readFile(join(dir, 'dead-letter-2026-11-21.jsonl'), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(text)).toEqual({ type: 'record', record });
    expect(fileNameFor(new Date('2026-01-02T03:04:05Z'))).toBe('dead-letter-2026-01-02.jsonl');
  });

  it('lists, gets and marks replayed with an appended marker (nothing rewritten)', async () => {
    const store = new FileDeadLetterStore(dir);
    const first = createDeadLetterRecord(input(), new Date('2026-11-21T10:00:00Z'));
    const second = createDeadLetterRecord(input({ method: 'DELETE' }), new Date('2026-11-21T10:00:01Z'));
    await store.append(first);
    await store.append(second);
    const before = await readFile(join(dir, 'dead-letter-2026-11-21.jsonl'), 'utf8');

    expect(await store.markReplayed(first.id, '201', new Date('2026-11-21T11:00:00Z'))).toBe(true);
    expect(await store.markReplayed('dlq-unknown', '201')).toBe(false);

    const after = await readFile(join(dir, 'dead-letter-2026-11-21.jsonl'), 'utf8');
    expect(after.startsWith(before)).toBe(true);
    expect((await store.list()).records.map((r) => r.id)).toEqual([second.id]);
    const all = await store.list({ includeReplayed: true });
    expect(all.records.map((r) => r.id)).toEqual([first.id, second.id]);
    expect(all.corruptLines).toEqual([]);
    expect(await store.get(first.id)).toEqual({ ...first, replayedAt: '2026-11-21T11:00:00.000Z', replayStatus: '201' });
    expect(await store.get(second.id)).toEqual(second);
    expect(await store.get('nope')).toBeNull();
  });

  it('writes replay markers to a file of their own, so the proxy is the only writer of its record files', async () => {
    // `dlq replay` marks records while the proxy appends: were they one file, a failed append cut
    // back by the proxy could take a marker with it, and a marker could land behind a torn line.
    const proxy = new FileDeadLetterStore(dir);
    const record = createDeadLetterRecord(input(), new Date('2026-11-21T10:00:00Z'));
    await proxy.append(record);
    const recordFile = await readFile(join(dir, 'dead-letter-2026-11-21.jsonl'), 'utf8');

    const operator = new FileDeadLetterStore(dir);
    expect(await operator.markReplayed(record.id, '200', new Date('2026-11-21T12:00:00Z'))).toBe(true);
    expect(await readFile(join(dir, 'dead-letter-2026-11-21.jsonl'), 'utf8')).toBe(recordFile);
    expect(JSON.parse(await readFile(join(dir, 'dead-letter-2026-11-21.replays.jsonl'), 'utf8'))).toEqual({
      type: 'replayed',
      id: record.id,
      replayedAt: '2026-11-21T12:00:00.000Z',
      replayStatus: '200',
    });
    expect(await proxy.get(record.id)).toMatchObject({ replayedAt: '2026-11-21T12:00:00.000Z', replayStatus: '200' });
  });

  it('still reads replay markers kept in the record files', async () => {
    const store = new FileDeadLetterStore(dir);
    const record = createDeadLetterRecord(input(), new Date('2026-11-21T10:00:00Z'));
    await store.append(record);
    await appendFile(join(dir, 'dead-letter-2026-11-21.jsonl'), `${JSON.stringify({ type: 'replayed', id: record.id, replayedAt: '2026-11-21T11:00:00.000Z', replayStatus: '201' })}\n`);
    expect(await store.list()).toEqual({ records: [], corruptLines: [] });
    expect(await store.get(record.id)).toMatchObject({ replayStatus: '201' });
  });

  it('lists nothing (and creates nothing) before the first append', async () => {
    const store = new FileDeadLetterStore(dir);
    expect(await store.list()).toEqual({ records: [], corruptLines: [] });
    await expect(readdir(dir)).rejects.toThrow();
  });

  it('serialises concurrent appends: every record arrives whole', async () => {
    const store = new FileDeadLetterStore(dir);
    const at = new Date('2026-11-21T10:00:00Z');
    const records = Array.from({ length: 40 }, (_, i) => createDeadLetterRecord(input({ body: Buffer.from('x'.repeat(1000 + i)) }), at));
    await Promise.all(records.map((record) => store.append(record)));
    const listing = await store.list();
    expect(listing.corruptLines).toEqual([]);
    expect(listing.records.map((r) => r.id)).toEqual(records.map((r) => r.id));
  });

  it('skips and reports a torn last line, and a later append does not glue onto it', async () => {
    const store = new FileDeadLetterStore(dir);
    const at = new Date('2026-11-21T10:00:00Z');
    const kept = createDeadLetterRecord(input(), at);
    await store.append(kept);
    const file = join(dir, 'dead-letter-2026-11-21.jsonl');
    // A crash in the middle of writing the next record.
    await appendFile(file, '{"type":"record","record":{"id":"dlq-torn","cre');

    const torn = await store.list();
    expect(torn.records.map((r) => r.id)).toEqual([kept.id]);
    expect(torn.corruptLines).toEqual([{ file: 'dead-letter-2026-11-21.jsonl', line: 2, reason: 'torn write: the last line has no newline' }]);

    const restarted = new FileDeadLetterStore(dir);
    const later = createDeadLetterRecord(input(), at);
    await restarted.append(later);
    const listing = await restarted.list();
    expect(listing.records.map((r) => r.id)).toEqual([kept.id, later.id]);
    expect(listing.corruptLines).toHaveLength(1);
    expect(listing.corruptLines[0]?.reason).toMatch(/^not JSON/);
  });

  it('checks the end of the file before every append, not once per process: a line torn after the first append is closed too', async () => {
    const store = new FileDeadLetterStore(dir);
    const at = new Date('2026-11-21T10:00:00Z');
    const first = createDeadLetterRecord(input(), at);
    await store.append(first);
    await appendFile(join(dir, 'dead-letter-2026-11-21.jsonl'), '{"type":"record","record":{"id":"dlq-torn","cre');

    const next = createDeadLetterRecord(input(), at);
    await store.append(next);
    const listing = await store.list();
    expect(listing.records.map((r) => r.id)).toEqual([first.id, next.id]);
    expect(listing.corruptLines).toEqual([{ file: 'dead-letter-2026-11-21.jsonl', line: 2, reason: expect.stringMatching(/^not JSON/) }]);
  });

  it('reports lines that are JSON but not entries, and ignores unrelated files', async () => {
    const store = new FileDeadLetterStore(dir);
    await store.append(createDeadLetterRecord(input(), new Date('2026-11-21T10:00:00Z')));
    const file = join(dir, 'dead-letter-2026-11-21.jsonl');
    await appendFile(file, '{"type":"record","record":{"id":1}}\n[1]\n{"type":"mystery"}\n\n');
    await writeFile(join(dir, 'notes.txt'), 'not a queue file');
    const listing = await store.list();
    expect(listing.records).toHaveLength(1);
    expect(listing.corruptLines.map((c) => [c.line, c.reason])).toEqual([
      [2, 'field [id] is missing or has the wrong type'],
      [3, 'not a JSON object'],
      [4, 'unknown entry type'],
    ]);
  });

  it('propagates write failures and keeps accepting appends afterwards', async () => {
    await writeFile(join(root, 'blocker'), 'a file where the directory should be');
    const broken = new FileDeadLetterStore(join(root, 'blocker', 'dlq'));
    await expect(broken.append(createDeadLetterRecord(input()))).rejects.toThrow();
    const store = new FileDeadLetterStore(dir);
    await store.append(createDeadLetterRecord(input()));
    expect((await store.list()).records).toHaveLength(1);
  });
});
