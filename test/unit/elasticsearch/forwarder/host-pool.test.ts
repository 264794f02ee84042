import { describe, expect, it } from 'vitest';
import { HostPool } from '../../../../src/elasticsearch/forwarder/host-pool.js';

const urls = ['http://a:9200', 'http://b:9200', 'http://c:9200'].map((u) => new URL(u));
const labels = (pool: HostPool) => pool.attemptOrder().map((host) => host.label);

describe('HostPool', () => {
  it('rotates the first host round-robin and offers every host once', () => {
    const pool = new HostPool(urls);
    expect(labels(pool)).toEqual(['http://a:9200', 'http://b:9200', 'http://c:9200']);
    expect(labels(pool)).toEqual(['http://b:9200', 'http://c:9200', 'http://a:9200']);
    expect(labels(pool)).toEqual(['http://c:9200', 'http://a:9200', 'http://b:9200']);
  });

  it('puts a host marked down last until its time is up, then back in rotation', () => {
    let now = 0;
    const pool = new HostPool(urls, { downForMs: 1000, now: () => now });
    const [a] = pool.hosts;
    if (a === undefined) throw new Error('no host');
    pool.markDown(a);
    expect(labels(pool)).toEqual(['http://b:9200', 'http://c:9200', 'http://a:9200']);
    expect(labels(pool)).toEqual(['http://b:9200', 'http://c:9200', 'http://a:9200']);
    now = 1000;
    expect(labels(pool)).toEqual(['http://c:9200', 'http://a:9200', 'http://b:9200']);
  });

  it('still offers hosts that are all down (re-probed rather than declared dead)', () => {
    const pool = new HostPool(urls);
    for (const host of pool.hosts) pool.markDown(host);
    expect(labels(pool)).toHaveLength(3);
  });
});
