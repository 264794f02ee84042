import { describe, expect, it } from 'vitest';
import { RouteTrie } from '../../../src/classify/es-route-trie.js';

const identity = (token: string): string => token;

describe('RouteTrie wildcard names', () => {
  it('lets an unnamed wildcard share a node with a named one, whichever comes first, and reports only named values', () => {
    const trie = new RouteTrie<string>(identity);
    trie.add('POST', '/{}/_fleet/_fleet_search', 'current', 'fleet');
    trie.add('PUT', '/{index}/{type}/{id}', 'v7', 'typed-index');
    trie.add('GET', '/{}/{}/{}', 'current', 'unnamed');
    expect(trie.resolve('PUT', '/products/doc/1', 'v7')).toEqual({
      matched: true,
      handler: 'typed-index',
      params: new Map([['index', 'products'], ['type', 'doc'], ['id', '1']]),
    });
    expect(trie.resolve('POST', '/products/_fleet/_fleet_search', 'v7')).toEqual({ matched: true, handler: 'fleet', params: new Map([['index', 'products']]) });
    expect(trie.resolve('GET', '/products/doc/1', 'current')).toMatchObject({ matched: true, handler: 'unnamed' });
  });

  it('still refuses two different names for one wildcard', () => {
    const trie = new RouteTrie<string>(identity);
    trie.add('PUT', '/{index}/_doc/{id}', 'current', 'index');
    expect(() => trie.add('GET', '/{index}/_doc/{doc_id}', 'current', 'get')).toThrow(/conflicting wildcard names id and doc_id/);
  });
});
