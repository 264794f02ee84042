import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_KEY_NAMES, CONFIG_KEYS, envNameOf, type ConfigKey } from '../../../src/config/config-keys.js';
import type { Settings } from '../../../src/config/settings.js';
import { settingsToProperties } from '../../../src/config/settings-to-properties.js';
import { createTestPki } from '../../support/test-certificates.js';
import { configErrorOf, load, tempConfigDir } from './config-test-helpers.js';

// The listener's TLS keys are checked against real files: a CA and a server certificate it signed.
const pki = createTestPki();
const listener = pki.issueServer('listener');
const LISTENER_TLS = { certFile: listener.certFile, keyFile: listener.keyFile, caFile: pki.caFile };
afterAll(() => pki.cleanup());

let files: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  files = tempConfigDir();
});
afterEach(() => files.cleanup());

describe('defaults', () => {
  it('are the original file’s values plus the proxy’s own', () => {
    const settings = load();
    expect(settings.zookeeper).toEqual({
      servers: 'localhost:2181',
      sessionTimeoutMs: 5000,
      connectionRetry: 5,
      connectionDelayMs: 1000,
      foregroundPrefix: 'A',
      backgroundPrefix: 'B',
      lockRoot: '/es-locks',
      auth: null,
      handOverMaxCount: 16,
      handOverMaxMs: 100,
      lingerMs: 50,
      documentCleanup: 'release',
    });
    expect(settings.lock).toEqual({ foregroundTimeoutMs: 2000, backgroundTimeoutMs: 2000 });
    expect(settings.elasticsearch).toEqual({
      hosts: [new URL('http://localhost:9200')],
      requestRetryCount: 3,
      ssl: { caFile: null, verify: true },
      auth: null,
    });
    expect(settings.proxy).toEqual({
      listenHost: '127.0.0.1',
      listenPort: 9201,
      listenTls: null,
      adminHost: '127.0.0.1',
      adminPort: 9202,
      adminToken: null,
      lockService: 'zookeeper',
      lockHeader: 'X-Lock-Type',
      lockDefault: 'foreground',
      deadLetterDir: 'data/dead-letter',
      deadLetterIndex: null,
      maxBodyBytes: 100 * 1024 * 1024,
      logLevel: 'info',
      logFormat: 'json',
      slowLockMs: 500,
      byQueryPolicy: 'passthrough',
      upstreamTimeoutMs: 60_000,
      answerBufferBytes: 1024 * 1024,
      shutdownTimeoutMs: 30_000,
      aliasCacheTtlMs: 5000,
      aliasCacheSize: 10_000,
      fencing: 'off',
      auth: {
        verify: 'auto',
        timeoutMs: 5000,
        cacheSize: 10_000,
        cacheTtlMs: 30_000,
        refusalTtlMs: 1000,
        privileges: 'off',
        foregroundAllow: [],
        foregroundDenied: 'background',
        maxWaitingPerPrincipal: 0,
        refusalThrottle: { delayAfter: 3, delayMs: 100, delayMaxMs: 2000, closeAfter: 20 },
      },
    });
    expect(settings.source).toEqual({ configFile: null, warnings: [] });
  });
});

/** A non-default value for every key and where it must land. */
const EVERY_KEY: ReadonlyArray<readonly [ConfigKey, string, (s: Settings) => unknown, unknown]> = [
  ['zookeeper.servers', 'zk1:2181, zk2:2182/chroot', (s) => s.zookeeper.servers, 'zk1:2181,zk2:2182/chroot'],
  ['zookeeper.session.timeout', '8000', (s) => s.zookeeper.sessionTimeoutMs, 8000],
  ['zookeeper.connection.retry', '7', (s) => s.zookeeper.connectionRetry, 7],
  ['zookeeper.connection.delay', '250', (s) => s.zookeeper.connectionDelayMs, 250],
  ['zookeeper.foregound.lock.prefix', 'F', (s) => s.zookeeper.foregroundPrefix, 'F'],
  ['zookeeper.backgound.lock.prefix', 'G', (s) => s.zookeeper.backgroundPrefix, 'G'],
  ['zookeeper.foregound.task.timeout', '1500', (s) => s.lock.foregroundTimeoutMs, 1500],
  ['zookeeper.backgound.task.timeout', '9000', (s) => s.lock.backgroundTimeoutMs, 9000],
  ['elastic.request.retry.count', '4', (s) => s.elasticsearch.requestRetryCount, 4],
  ['elasticsearch.hosts', 'http://es1:9200, https://es2:9243/prefix', (s) => s.elasticsearch.hosts.map(String), ['http://es1:9200/', 'https://es2:9243/prefix']],
  ['elasticsearch.ssl.ca', '/dev/null', (s) => s.elasticsearch.ssl.caFile, '/dev/null'],
  ['elasticsearch.ssl.verify', 'FALSE', (s) => s.elasticsearch.ssl.verify, false],
  ['elasticsearch.auth.username', 'elastic', (s) => s.elasticsearch.auth, { kind: 'basic', username: 'elastic', password: ' p=w:d ' }],
  ['elasticsearch.auth.password', ' p=w:d ', (s) => s.elasticsearch.auth, { kind: 'basic', username: 'elastic', password: ' p=w:d ' }],
  ['proxy.listen.host', '0.0.0.0', (s) => s.proxy.listenHost, '0.0.0.0'],
  ['proxy.listen.port', '19201', (s) => s.proxy.listenPort, 19201],
  ['proxy.listen.tls.cert', listener.certFile, (s) => s.proxy.listenTls, LISTENER_TLS],
  ['proxy.listen.tls.key', listener.keyFile, (s) => s.proxy.listenTls, LISTENER_TLS],
  ['proxy.listen.tls.ca', pki.caFile, (s) => s.proxy.listenTls, LISTENER_TLS],
  ['proxy.admin.host', '::1', (s) => s.proxy.adminHost, '::1'],
  ['proxy.admin.port', '19202', (s) => s.proxy.adminPort, 19202],
  ['proxy.admin.token', 's3cret', (s) => s.proxy.adminToken, 's3cret'],
  ['proxy.lock.service', 'ZooKeeper', (s) => s.proxy.lockService, 'zookeeper'],
  ['zookeeper.lock.root', '/locks/es', (s) => s.zookeeper.lockRoot, '/locks/es'],
  ['zookeeper.auth', 'digest:proxy:pa:ss', (s) => s.zookeeper.auth, { scheme: 'digest', credentials: 'proxy:pa:ss' }],
  ['zookeeper.lock.handover.max.count', '0', (s) => s.zookeeper.handOverMaxCount, 0],
  ['zookeeper.lock.handover.max.ms', '250', (s) => s.zookeeper.handOverMaxMs, 250],
  ['zookeeper.lock.linger.ms', '0', (s) => s.zookeeper.lingerMs, 0],
  ['zookeeper.lock.document.cleanup', 'Reaper', (s) => s.zookeeper.documentCleanup, 'reaper'],
  ['proxy.lock.header', 'X-Priority', (s) => s.proxy.lockHeader, 'X-Priority'],
  ['proxy.lock.default', 'Background', (s) => s.proxy.lockDefault, 'background'],
  ['proxy.byquery.policy', 'reject', (s) => s.proxy.byQueryPolicy, 'reject'],
  ['proxy.deadletter.dir', '/var/lib/dlq', (s) => s.proxy.deadLetterDir, '/var/lib/dlq'],
  ['proxy.deadletter.index', 'es-lock-proxy-dlq', (s) => s.proxy.deadLetterIndex, 'es-lock-proxy-dlq'],
  ['proxy.max.body.bytes', '512kb', (s) => s.proxy.maxBodyBytes, 512 * 1024],
  ['proxy.answer.buffer.bytes', '256kb', (s) => s.proxy.answerBufferBytes, 256 * 1024],
  ['proxy.upstream.timeout.ms', '1000', (s) => s.proxy.upstreamTimeoutMs, 1000],
  ['proxy.shutdown.timeout.ms', '0', (s) => s.proxy.shutdownTimeoutMs, 0],
  ['proxy.alias.cache.ttl.ms', '100', (s) => s.proxy.aliasCacheTtlMs, 100],
  ['proxy.alias.cache.size', '50', (s) => s.proxy.aliasCacheSize, 50],
  ['proxy.fencing', 'ON', (s) => s.proxy.fencing, 'on'],
  ['proxy.log.level', 'debug', (s) => s.proxy.logLevel, 'debug'],
  ['proxy.log.format', 'pretty', (s) => s.proxy.logFormat, 'pretty'],
  ['proxy.log.slow.lock.ms', '50', (s) => s.proxy.slowLockMs, 50],
  ['proxy.auth.verify', 'ON', (s) => s.proxy.auth.verify, 'on'],
  ['proxy.auth.timeout.ms', '750', (s) => s.proxy.auth.timeoutMs, 750],
  ['proxy.auth.cache.size', '64', (s) => s.proxy.auth.cacheSize, 64],
  ['proxy.auth.cache.ttl.ms', '2000', (s) => s.proxy.auth.cacheTtlMs, 2000],
  ['proxy.auth.cache.refusal.ttl.ms', '250', (s) => s.proxy.auth.refusalTtlMs, 250],
  ['proxy.auth.privileges', 'on', (s) => s.proxy.auth.privileges, 'on'],
  ['proxy.auth.refusal.delay.after', '5', (s) => s.proxy.auth.refusalThrottle.delayAfter, 5],
  ['proxy.auth.refusal.delay.ms', '50', (s) => s.proxy.auth.refusalThrottle.delayMs, 50],
  ['proxy.auth.refusal.delay.max.ms', '0', (s) => s.proxy.auth.refusalThrottle.delayMaxMs, 0],
  ['proxy.auth.refusal.close.after', '0', (s) => s.proxy.auth.refusalThrottle.closeAfter, 0],
  ['proxy.priority.foreground.allow', ' alice, role:interactive,,api_key:ui ', (s) => s.proxy.auth.foregroundAllow, ['alice', 'role:interactive', 'api_key:ui']],
  ['proxy.priority.foreground.denied', 'reject', (s) => s.proxy.auth.foregroundDenied, 'reject'],
  ['proxy.lock.max.waiting.per.principal', '32', (s) => s.proxy.auth.maxWaitingPerPrincipal, 32],
];

describe('every key read from a file', () => {
  const apiKeyLess = EVERY_KEY.map(([key, value]) => `${key}=${value.replace(/^ | $/g, '\\ ')}`).join('\n');

  it.each(EVERY_KEY)('%s', (_key, _value, select, expected) => {
    const settings = load({ configFile: files.write('all.properties', apiKeyLess) });
    expect(select(settings)).toEqual(expected);
  });

  it('elasticsearch.auth.api_key', () => {
    const settings = load({ configFile: files.write('k.properties', 'elasticsearch.auth.api_key=QUJD==\n') });
    expect(settings.elasticsearch.auth).toEqual({ kind: 'apiKey', apiKey: 'QUJD==' });
  });

  it('the table covers every registered key', () => {
    const covered = new Set<string>([...EVERY_KEY.map(([key]) => key), 'elasticsearch.auth.api_key']);
    expect(CONFIG_KEY_NAMES.filter((key) => !covered.has(key))).toEqual([]);
  });

  it('records the absolute path of the file, resolved against cwd', () => {
    files.write('rel.properties', 'proxy.listen.port=1\n');
    const settings = load({ configFile: 'rel.properties', cwd: files.dir });
    expect(settings.source.configFile).toBe(`${files.dir}/rel.properties`);
    expect(settings.proxy.listenPort).toBe(1);
  });
});

describe('aliases (the correctly spelled forms)', () => {
  const ALIASES = [
    ['zookeeper.foreground.lock.prefix', 'C', (s: Settings) => s.zookeeper.foregroundPrefix],
    ['zookeeper.background.lock.prefix', 'D', (s: Settings) => s.zookeeper.backgroundPrefix],
    ['zookeeper.foreground.task.timeout', '111', (s: Settings) => String(s.lock.foregroundTimeoutMs)],
    ['zookeeper.background.task.timeout', '222', (s: Settings) => String(s.lock.backgroundTimeoutMs)],
  ] as const;

  it.each(ALIASES)('%s in a file', (alias, value, select) => {
    const extra = alias.includes('lock.prefix') ? '\nzookeeper.backgound.lock.prefix=E\n' : '';
    const settings = load({ configFile: files.write('a.properties', `${alias}=${value}${alias.includes('background.lock') ? '' : extra}`) });
    expect(select(settings)).toBe(value);
  });

  it.each(ALIASES)('%s in the environment', (alias, value, select) => {
    const env = { [envNameOf(alias)]: value, ES_LOCK_PROXY_ZOOKEEPER_BACKGOUND_LOCK_PREFIX: alias.includes('background.lock') ? undefined : 'E' };
    expect(select(load({ env }))).toBe(value);
  });

  it.each(ALIASES)('%s in --set', (alias, value, select) => {
    expect(select(load({ flags: ['zookeeper.backgound.lock.prefix=E', `${alias}=${value}`] }))).toBe(value);
  });

  it('every alias is registered', () => {
    const aliases = CONFIG_KEY_NAMES.flatMap((key) => CONFIG_KEYS[key].aliases);
    expect(aliases.sort()).toEqual(ALIASES.map(([alias]) => alias).sort());
  });

  it('the same key under both spellings with different values is an error naming both', () => {
    const file = files.write('both.properties', 'zookeeper.foregound.task.timeout=100\nzookeeper.foreground.task.timeout=200\n');
    expect(configErrorOf({ configFile: file })).toBe(
      `zookeeper.foreground.task.timeout=200: expected one spelling per key, but zookeeper.foregound.task.timeout=100 is also set (${file}:1)`,
    );
  });

  it('both spellings with the same value are accepted', () => {
    const file = files.write('both.properties', 'zookeeper.foregound.task.timeout=100\nzookeeper.foreground.task.timeout=100\n');
    expect(load({ configFile: file }).lock.foregroundTimeoutMs).toBe(100);
  });
});

describe('precedence: defaults < file < environment < --set', () => {
  it('a file beats the default, the environment beats the file, --set beats the environment', () => {
    const configFile = files.write('p.properties', 'zookeeper.servers=file:1\nproxy.listen.port=1001\nproxy.admin.port=2001\n');
    const env = { ES_LOCK_PROXY_ZOOKEEPER_SERVERS: 'env:2', ES_LOCK_PROXY_PROXY_LISTEN_PORT: '1002' };
    const settings = load({ configFile, env, flags: ['zookeeper.servers=flag:3'] });
    expect(settings.zookeeper.servers).toBe('flag:3');
    expect(settings.proxy.listenPort).toBe(1002);
    expect(settings.proxy.adminPort).toBe(2001);
    expect(settings.zookeeper.sessionTimeoutMs).toBe(5000);
  });

  it('the environment name of every key is ES_LOCK_PROXY_ + the key upper-cased, dots as underscores', () => {
    expect(envNameOf('zookeeper.servers')).toBe('ES_LOCK_PROXY_ZOOKEEPER_SERVERS');
    expect(envNameOf('elasticsearch.auth.api_key')).toBe('ES_LOCK_PROXY_ELASTICSEARCH_AUTH_API_KEY');
    const names = CONFIG_KEY_NAMES.flatMap((key) => [key, ...CONFIG_KEYS[key].aliases]).map(envNameOf);
    expect(new Set(names).size).toBe(names.length);
  });

  it('LOG_LEVEL works, below ES_LOCK_PROXY_PROXY_LOG_LEVEL and above the file; empty LOG_LEVEL is ignored', () => {
    const configFile = files.write('l.properties', 'proxy.log.level=warn\n');
    expect(load({ configFile, env: { LOG_LEVEL: 'debug' } }).proxy.logLevel).toBe('debug');
    expect(load({ configFile, env: { LOG_LEVEL: 'debug', ES_LOCK_PROXY_PROXY_LOG_LEVEL: 'error' } }).proxy.logLevel).toBe('error');
    expect(load({ configFile, env: { LOG_LEVEL: '' } }).proxy.logLevel).toBe('warn');
    expect(load({ configFile, env: { LOG_LEVEL: 'debug' }, flags: ['proxy.log.level=trace'] }).proxy.logLevel).toBe('trace');
  });

  it('an empty override clears an optional key set by the file', () => {
    const configFile = files.write('t.properties', 'proxy.admin.token=abc\n');
    expect(load({ configFile }).proxy.adminToken).toBe('abc');
    expect(load({ configFile, env: { ES_LOCK_PROXY_PROXY_ADMIN_TOKEN: '' } }).proxy.adminToken).toBeNull();
    expect(load({ configFile, flags: ['proxy.admin.token='] }).proxy.adminToken).toBeNull();
  });

  it('the last of repeated --set flags wins; a value may contain =', () => {
    expect(load({ flags: ['proxy.admin.token=a', 'proxy.admin.token=b=c'] }).proxy.adminToken).toBe('b=c');
  });
});

describe('proxy.lock.service=in-process (single instance, no ZooKeeper)', () => {
  it('is read from every source', () => {
    expect(load({ flags: ['proxy.lock.service=in-process'] }).proxy.lockService).toBe('in-process');
    expect(load({ env: { ES_LOCK_PROXY_PROXY_LOCK_SERVICE: 'In-Process' } }).proxy.lockService).toBe('in-process');
    expect(load({ configFile: files.write('s.properties', 'proxy.lock.service=in-process\n') }).proxy.lockService).toBe('in-process');
  });

  it('ignores the ZooKeeper keys: not validated, defaults kept, named in one note', () => {
    const settings = load({
      flags: ['proxy.lock.service=in-process', 'zookeeper.servers=none', 'zookeeper.auth=digest:u:p', 'zookeeper.session.timeout=abc'],
    });
    expect(settings.zookeeper).toEqual(load().zookeeper);
    expect(settings.source.warnings).toEqual([
      'proxy.lock.service=in-process: zookeeper.servers, zookeeper.session.timeout, zookeeper.auth ignored (they configure ZooKeeper, which this mode does not use)',
    ]);
  });

  it('keeps the lock wait timeouts and the retry count, which drive the in-process locks too', () => {
    const settings = load({ flags: ['proxy.lock.service=in-process', 'zookeeper.foregound.task.timeout=123', 'elastic.request.retry.count=9'] });
    expect(settings.lock.foregroundTimeoutMs).toBe(123);
    expect(settings.elasticsearch.requestRetryCount).toBe(9);
    expect(settings.source.warnings).toEqual([]);
  });

  it('says nothing about ZooKeeper keys left at their defaults (the shipped file repeats them)', () => {
    const configFile = files.write('d.properties', 'zookeeper.servers=localhost:2181\nzookeeper.lock.root=/es-locks\n');
    expect(load({ configFile, flags: ['proxy.lock.service=in-process'] }).source.warnings).toEqual([]);
  });
});

describe('warnings (returned, not printed)', () => {
  it('names unknown keys in the file, the environment and flags, and repeated keys', () => {
    const configFile = files.write('w.properties', 'zookeeper.server=h:1\nproxy.listen.port=1\nproxy.listen.port=2\n');
    const settings = load({
      configFile,
      env: { ES_LOCK_PROXY_ZOOKEEPER_SERVER: 'x', PATH: '/bin' },
      flags: ['proxy.lsten.port=3'],
    });
    expect(settings.source.warnings).toEqual([
      `${configFile}:1: unknown key "zookeeper.server" ignored`,
      `${configFile}:3: "proxy.listen.port" repeats ${configFile}:2; the later value wins`,
      'environment: unknown variable ES_LOCK_PROXY_ZOOKEEPER_SERVER ignored',
      '--set: unknown key "proxy.lsten.port" ignored',
    ]);
    expect(settings.proxy.listenPort).toBe(2);
  });

  it('warns when TLS verification is off', () => {
    expect(load({ flags: ['elasticsearch.ssl.verify=false'] }).source.warnings).toEqual([
      'elasticsearch.ssl.verify=false: TLS certificates of the cluster are not verified',
    ]);
  });
});

describe('the settings object', () => {
  it('is deeply frozen', () => {
    const settings = load();
    expect(Object.isFrozen(settings)).toBe(true);
    expect(Object.isFrozen(settings.zookeeper)).toBe(true);
    expect(Object.isFrozen(settings.elasticsearch.hosts)).toBe(true);
    expect(Object.isFrozen(settings.elasticsearch.hosts[0])).toBe(true);
    expect(Object.isFrozen(settings.elasticsearch.ssl)).toBe(true);
    expect(Object.isFrozen(settings.source.warnings)).toBe(true);
    expect(Reflect.set(settings.proxy, 'listenPort', 1)).toBe(false);
    expect(settings.proxy.listenPort).toBe(9201);
  });

  it('round-trips through settingsToProperties (the two mappings agree for every key)', () => {
    const configFile = files.write('all.properties', EVERY_KEY.map(([key, value]) => `${key}=${value.replace(/^ | $/g, '\\ ')}`).join('\n'));
    const original = load({ configFile });
    const properties = settingsToProperties(original);
    const text = Object.entries(properties).map(([key, value]) => `${key}=${value.replace(/^ | $/g, '\\ ')}`).join('\n');
    const reloaded = load({ configFile: files.write('again.properties', text) });
    expect({ ...reloaded, source: null }).toEqual({ ...original, source: null });
  });
});
