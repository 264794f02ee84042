import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { routeVersionOf } from '../../../src/classify/compatibility.js';
import { classifyRoute } from '../../../src/classify/route-parser.js';

const VENDOR = 'application/vnd.elasticsearch+json';

/** A typed index of `products/42`: what Elasticsearch 8 does with `PUT /products/doc/42` in REST API version 7. */
const TYPED = { kind: 'single', op: 'index', index: 'products', id: '42', typed: true };
/** What Elasticsearch 8 serves as its current API, where a typed path is no route. */
const PASS = { kind: 'passthrough' };

/**
 * Spellings of the compatible-with parameter, each with what Elasticsearch 8 makes of it
 * (ParsedMediaType.parseMediaType, then RestCompatibleVersionHelper.parseVersion's Byte.parseByte).
 */
const rows: [string, IncomingHttpHeaders, object][] = [
  ['leading zero', { accept: `${VENDOR};compatible-with=07` }, TYPED],
  ['leading zeros on both headers', { accept: `${VENDOR};compatible-with=007`, 'content-type': `${VENDOR};compatible-with=07` }, TYPED],
  ['upper case type, name and value', { accept: 'APPLICATION/VND.ELASTICSEARCH+JSON;COMPATIBLE-WITH=07' }, TYPED],
  ['spaces around the parameter', { accept: `${VENDOR} ;  compatible-with=07  ` }, TYPED],
  ['a tab before the parameter', { accept: `${VENDOR};\tcompatible-with=7` }, TYPED],
  ['parameter after charset', { accept: `${VENDOR}; charset=utf-8; compatible-with=07` }, TYPED],
  ['a plus sign (Byte.parseByte takes it)', { accept: `${VENDOR};compatible-with=+7` }, TYPED],
  ['the last of two parameters wins', { accept: `${VENDOR};compatible-with=8;compatible-with=07` }, TYPED],
  ['any media type carries the parameter', { accept: 'application/json;compatible-with=07' }, TYPED],
  ['a text type too', { accept: 'text/plain;compatible-with=7' }, TYPED],
  ['8 with a leading zero is the current API', { accept: `${VENDOR};compatible-with=08` }, PASS],
  ['the last of two parameters wins (8)', { accept: `${VENDOR};compatible-with=7;compatible-with=8` }, PASS],
  ['9 is the current API of 9.x', { accept: `${VENDOR};compatible-with=009` }, PASS],
  // A comma makes the header a media range, which Elasticsearch ignores: the current API.
  ['a list of media types is ignored', { accept: `${VENDOR};compatible-with=8, text/plain` }, PASS],
  ['no compatible-with at all', { accept: VENDOR, 'content-type': 'application/json' }, PASS],
];

describe('the compatible-with version as Elasticsearch parses it', () => {
  it.each(rows)('%s', (_name, headers, expected) => {
    expect(routeVersionOf(headers)).toBe(expected === TYPED ? 'v7' : 'current');
    // Elasticsearch's typed routes need version 7; OpenSearch 1.x serves them to every request, so a
    // typed path is locked either way, as the same document.
    expect(classifyRoute('PUT', '/products/doc/42', headers)).toEqual(TYPED);
  });

  it('locks typed deletes and typed bulks with compatible-with=07 (they carry no body to check against)', () => {
    const headers = { accept: `${VENDOR};compatible-with=07`, 'content-type': `${VENDOR};compatible-with=07` };
    expect(classifyRoute('DELETE', '/products/doc/42', headers)).toEqual({ ...TYPED, op: 'delete' });
    expect(classifyRoute('POST', '/products/doc/_bulk', headers)).toEqual({ kind: 'bulk', defaultIndex: 'products', typed: true });
  });
});
