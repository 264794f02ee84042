import { describe, expect, it } from 'vitest';
import { CONFIG_KEY_NAMES, CONFIG_KEYS } from '../../../src/config/config-keys.js';
import { reloadableDiff } from '../../../src/config/reloadable-diff.js';
import { load } from './config-test-helpers.js';

describe('reloadableDiff', () => {
  it('reports nothing for equal settings loaded twice', () => {
    expect(reloadableDiff(load(), load())).toEqual({ live: [], restart: [] });
  });

  it('splits changes into live and restart-only, values as properties text', () => {
    const next = load({
      flags: [
        'zookeeper.foreground.task.timeout=500',
        'zookeeper.backgound.task.timeout=9000',
        'elastic.request.retry.count=7',
        'proxy.log.level=debug',
        'proxy.log.slow.lock.ms=50',
        'proxy.upstream.timeout.ms=1000',
        'proxy.listen.port=9301',
        'elasticsearch.hosts=http://other:9200',
        'zookeeper.servers=zk2:2181',
        'zookeeper.lock.root=/other',
        'zookeeper.foregound.lock.prefix=F',
        'zookeeper.backgound.lock.prefix=G',
      ],
    });
    const diff = reloadableDiff(load(), next);
    expect(diff.live).toEqual([
      { key: 'zookeeper.foregound.task.timeout', from: '2000', to: '500' },
      { key: 'zookeeper.backgound.task.timeout', from: '2000', to: '9000' },
      { key: 'elastic.request.retry.count', from: '3', to: '7' },
      { key: 'proxy.log.level', from: 'info', to: 'debug' },
      { key: 'proxy.log.slow.lock.ms', from: '500', to: '50' },
    ]);
    expect(diff.restart).toEqual([
      { key: 'zookeeper.servers', from: 'localhost:2181', to: 'zk2:2181' },
      { key: 'zookeeper.foregound.lock.prefix', from: 'A', to: 'F' },
      { key: 'zookeeper.backgound.lock.prefix', from: 'B', to: 'G' },
      { key: 'elasticsearch.hosts', from: 'http://localhost:9200/', to: 'http://other:9200/' },
      { key: 'proxy.listen.port', from: '9201', to: '9301' },
      { key: 'zookeeper.lock.root', from: '/es-locks', to: '/other' },
      { key: 'proxy.upstream.timeout.ms', from: '60000', to: '1000' },
    ]);
  });

  it('redacts secrets in changes', () => {
    const diff = reloadableDiff(load({ flags: ['zookeeper.auth=digest:u:old'] }), load({ flags: ['zookeeper.auth=digest:u:new'] }));
    expect(diff.restart).toEqual([{ key: 'zookeeper.auth', from: '[redacted]', to: '[redacted]' }]);
  });

  it('ports, hosts, ZooKeeper, lock root, prefixes and every credential need a restart', () => {
    const restartOnly = [
      'proxy.listen.host', 'proxy.listen.port', 'proxy.admin.host', 'proxy.admin.port', 'elasticsearch.hosts',
      'zookeeper.servers', 'zookeeper.lock.root', 'zookeeper.foregound.lock.prefix', 'zookeeper.backgound.lock.prefix',
      'zookeeper.auth', 'elasticsearch.auth.username', 'elasticsearch.auth.password', 'elasticsearch.auth.api_key',
      'proxy.admin.token', 'elasticsearch.ssl.ca', 'elasticsearch.ssl.verify', 'zookeeper.session.timeout',
      'proxy.upstream.timeout.ms', 'proxy.shutdown.timeout.ms', 'proxy.lock.service',
      'proxy.listen.tls.cert', 'proxy.listen.tls.key', 'proxy.listen.tls.ca',
    ] as const;
    expect(restartOnly.filter((key) => CONFIG_KEYS[key].reload !== 'restart')).toEqual([]);
    expect(CONFIG_KEY_NAMES.filter((key) => CONFIG_KEYS[key].reload === 'live')).toEqual([
      'zookeeper.foregound.task.timeout',
      'zookeeper.backgound.task.timeout',
      'elastic.request.retry.count',
      'proxy.alias.cache.ttl.ms',
      'proxy.fencing',
      'proxy.log.level',
      'proxy.log.slow.lock.ms',
      'proxy.auth.verify',
      'proxy.auth.timeout.ms',
      'proxy.auth.cache.ttl.ms',
      'proxy.auth.cache.refusal.ttl.ms',
      'proxy.auth.privileges',
      'proxy.auth.refusal.delay.after',
      'proxy.auth.refusal.delay.ms',
      'proxy.auth.refusal.delay.max.ms',
      'proxy.auth.refusal.close.after',
      'proxy.priority.foreground.allow',
      'proxy.priority.foreground.denied',
      'proxy.lock.max.waiting.per.principal',
    ]);
  });
});
