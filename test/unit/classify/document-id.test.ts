import { describe, expect, it } from 'vitest';
import { documentKey, idTooLongMessage, javaUtf8Length, storedId } from '../../../src/classify/document-id.js';

describe('document ids as Elasticsearch validates and stores them', () => {
  it.each([
    ['€'.repeat(170), 510],
    ['€'.repeat(171), 513],
    ['😀'.repeat(128), 512],
    ['😀'.repeat(129), 516],
    ['x'.repeat(513), 513],
    // Java's encoder writes `?` for an unpaired surrogate (checked against String.getBytes on Java 17).
    ['\ud800'.repeat(171), 171],
    ['\udc00x\ud800', 3],
    ['\ud83d\ude00\ud83d', 5],
    ['\ude00\ud83d', 2],
  ])('counts %j as Java does', (id, bytes) => {
    expect(javaUtf8Length(id)).toBe(bytes);
  });

  it('refuses indexed and updated ids over 512 bytes, never deletes', () => {
    expect(idTooLongMessage('index', 'x'.repeat(512))).toBeNull();
    expect(idTooLongMessage('create', 'x'.repeat(513))).toBe(`id [${'x'.repeat(513)}] is too long, must be no longer than 512 bytes but was: 513`);
    expect(idTooLongMessage('update', '€'.repeat(171))).toContain('but was: 513');
    expect(idTooLongMessage('delete', 'x'.repeat(10_000))).toBeNull();
    expect(idTooLongMessage('index', '\ud800'.repeat(512))).toBeNull();
    expect(idTooLongMessage('index', '\ud800'.repeat(513))).toContain('but was: 513');
  });

  it('stores every unpaired surrogate as U+FFFD and leaves pairs alone', () => {
    expect(storedId('\ud800')).toBe('\ufffd');
    expect(storedId('\udc00')).toBe('\ufffd');
    expect(storedId('a\ud83d\ude00b')).toBe('a\ud83d\ude00b');
    expect(storedId('\ud83d\ud83d\ude00\ude00')).toBe('\ufffd\ud83d\ude00\ufffd');
    expect(storedId('\ude00\ud83d')).toBe('\ufffd\ufffd');
    expect(storedId('plain')).toBe('plain');
    expect(documentKey('idx', '\ud800x')).toEqual({ index: 'idx', id: '\ufffdx' });
  });
});
