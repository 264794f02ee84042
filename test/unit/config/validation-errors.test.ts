import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { watchSettings, type SettingsWatcherOptions } from '../../../src/server/settings-watcher.js';
import { configErrorOf, load, tempConfigDir } from './config-test-helpers.js';

const HOSTS = 'comma-separated http:// or https:// URLs such as http://localhost:9200';
const SERVERS = 'comma-separated host:port pairs such as localhost:2181,localhost:2182 (optional /chroot suffix)';
const ZNODE = 'an absolute znode path such as /es-locks';
const PORT = 'a TCP port from 0 to 65535 (0 picks a free port)';
const PREFIX = 'a lock prefix of 1 to 32 letters or digits';
const LOG_LEVELS = 'one of fatal, error, warn, info, debug, trace, silent';
const EMPTY_ALLOW_WITHOUT_CHECKS =
  'an empty list with proxy.auth.verify=off (without credential checks nobody is recognised, so every foreground write would be demoted)';
const BYTES = 'a byte size such as 104857600, 512kb or 100mb (units b, kb, mb, gb, tb, pb)';

/** [--set flags, the exact one-line message]. */
const FLAG_ERRORS: ReadonlyArray<readonly [readonly string[], string]> = [
  [['zookeeper.servers=localhost'], `zookeeper.servers=localhost: expected ${SERVERS}`],
  [['zookeeper.servers=zk:99999'], `zookeeper.servers=zk:99999: expected ${SERVERS}`],
  [['zookeeper.servers=zk:2181,'], `zookeeper.servers=zk:2181,: expected ${SERVERS}`],
  [['zookeeper.servers=zk:2181/chroot/'], `zookeeper.servers=zk:2181/chroot/: expected ${SERVERS}`],
  [['zookeeper.servers=http://zk:2181'], `zookeeper.servers=http://zk:2181: expected ${SERVERS}`],
  [['zookeeper.servers=none'], `zookeeper.servers=none: expected ${SERVERS}; to run without ZooKeeper set proxy.lock.service=in-process instead`],
  [['zookeeper.servers='], `zookeeper.servers="": expected ${SERVERS}; to run without ZooKeeper set proxy.lock.service=in-process instead`],
  [['proxy.lock.service=memory'], 'proxy.lock.service=memory: expected one of zookeeper, in-process'],
  [['zookeeper.session.timeout=abc'], 'zookeeper.session.timeout=abc: expected an integer from 1 to 2147483647'],
  [['zookeeper.session.timeout=0'], 'zookeeper.session.timeout=0: expected an integer from 1 to 2147483647'],
  [['zookeeper.connection.retry=-1'], 'zookeeper.connection.retry=-1: expected an integer from 0 to 2147483647'],
  [['zookeeper.connection.delay=1.5'], 'zookeeper.connection.delay=1.5: expected an integer from 0 to 2147483647'],
  [['zookeeper.foregound.lock.prefix=Z'], 'zookeeper.foregound.lock.prefix=Z: expected a prefix that sorts before the background prefix "B"'],
  [['zookeeper.foreground.lock.prefix=Z'], 'zookeeper.foreground.lock.prefix=Z: expected a prefix that sorts before the background prefix "B"'],
  [['zookeeper.foregound.lock.prefix=B'], 'zookeeper.foregound.lock.prefix=B: expected a prefix that sorts before the background prefix "B"'],
  // Code-unit order, as ZooKeeper clients sort: "a" (0x61) comes after "B" (0x42).
  [['zookeeper.foregound.lock.prefix=a'], 'zookeeper.foregound.lock.prefix=a: expected a prefix that sorts before the background prefix "B"'],
  [['zookeeper.backgound.lock.prefix=0'], 'zookeeper.backgound.lock.prefix=0: expected a prefix that sorts after the foreground prefix "A"'],
  [['zookeeper.backgound.lock.prefix=AB'], 'zookeeper.backgound.lock.prefix=AB: expected a prefix that does not start with the foreground prefix "A"'],
  [['zookeeper.foregound.lock.prefix=X', 'zookeeper.backgound.lock.prefix=XY'], 'zookeeper.foregound.lock.prefix=X: expected a prefix that is not the start of the background prefix "XY"'],
  [['zookeeper.foregound.lock.prefix=A-'], `zookeeper.foregound.lock.prefix=A-: expected ${PREFIX}`],
  [['zookeeper.foregound.lock.prefix='], `zookeeper.foregound.lock.prefix="": expected ${PREFIX}`],
  [['zookeeper.backgound.lock.prefix=Bä'], `zookeeper.backgound.lock.prefix=Bä: expected ${PREFIX}`],
  [['zookeeper.foregound.task.timeout=-5'], 'zookeeper.foregound.task.timeout=-5: expected an integer from 0 to 2147483647'],
  [['zookeeper.backgound.task.timeout=2147483648'], 'zookeeper.backgound.task.timeout=2147483648: expected an integer from 0 to 2147483647'],
  [['elastic.request.retry.count=1001'], 'elastic.request.retry.count=1001: expected an integer from 0 to 1000'],
  [['elasticsearch.hosts=ftp://es:9200'], `elasticsearch.hosts=ftp://es:9200: expected ${HOSTS}`],
  [['elasticsearch.hosts=localhost:9200'], `elasticsearch.hosts=localhost:9200: expected ${HOSTS}`],
  [['elasticsearch.hosts=http://a:9200,,http://b:9200'], `elasticsearch.hosts=http://a:9200,,http://b:9200: expected ${HOSTS}`],
  [['elasticsearch.hosts=http://a:9200/?pretty'], `elasticsearch.hosts=http://a:9200/?pretty: expected ${HOSTS} (no query or fragment)`],
  [['elasticsearch.hosts='], `elasticsearch.hosts="": expected ${HOSTS}`],
  [['elasticsearch.ssl.verify=yes'], 'elasticsearch.ssl.verify=yes: expected one of true, false'],
  [['elasticsearch.ssl.ca=/nonexistent/ca.pem'], 'elasticsearch.ssl.ca=/nonexistent/ca.pem: expected a readable file (ENOENT: no such file or directory)'],
  [['elasticsearch.auth.username=elastic'], 'elasticsearch.auth.username=elastic: expected elasticsearch.auth.password to be set too'],
  [['elasticsearch.auth.password=hunter2'], 'elasticsearch.auth.password=[redacted]: expected elasticsearch.auth.username to be set too'],
  [
    ['elasticsearch.auth.api_key=a2V5', 'elasticsearch.auth.username=u', 'elasticsearch.auth.password=p'],
    'elasticsearch.auth.api_key=[redacted]: expected either elasticsearch.auth.api_key or elasticsearch.auth.username/password, not both',
  ],
  [['proxy.listen.host=not a host'], 'proxy.listen.host="not a host": expected a hostname or IP address'],
  [['proxy.admin.host=-bad-'], 'proxy.admin.host=-bad-: expected a hostname or IP address'],
  [['proxy.listen.port=65536'], `proxy.listen.port=65536: expected ${PORT}`],
  [['proxy.admin.port=http'], `proxy.admin.port=http: expected ${PORT}`],
  [['proxy.admin.port=9201'], 'proxy.admin.port=9201: expected a port other than proxy.listen.port (9201)'],
  [['proxy.admin.host=0.0.0.0', 'proxy.admin.port=9201'], 'proxy.admin.port=9201: expected a port other than proxy.listen.port (9201)'],
  [['zookeeper.lock.root=es-locks'], `zookeeper.lock.root=es-locks: expected ${ZNODE} (must start with /)`],
  [['zookeeper.lock.root=/es-locks/'], `zookeeper.lock.root=/es-locks/: expected ${ZNODE} (no trailing /)`],
  [['zookeeper.lock.root=/'], `zookeeper.lock.root=/: expected ${ZNODE} (a node below the root)`],
  [['zookeeper.lock.root=/a//b'], `zookeeper.lock.root=/a//b: expected ${ZNODE} (no empty, . or .. segments)`],
  [['zookeeper.lock.root=/a/../b'], `zookeeper.lock.root=/a/../b: expected ${ZNODE} (no empty, . or .. segments)`],
  [['zookeeper.lock.root=/zookeeper/locks'], `zookeeper.lock.root=/zookeeper/locks: expected ${ZNODE} (/zookeeper is reserved)`],
  [['zookeeper.lock.root=/a\u0001b'], `zookeeper.lock.root="/a\\u0001b": expected ${ZNODE} (no control or reserved characters)`],
  [['zookeeper.auth=proxy:secret'], 'zookeeper.auth=[redacted]: expected digest:user:password'],
  [['zookeeper.auth=digest::secret'], 'zookeeper.auth=[redacted]: expected digest:user:password'],
  [['proxy.lock.header=X Lock'], 'proxy.lock.header="X Lock": expected an HTTP header name (RFC 9110 token)'],
  [['proxy.lock.header=X-Lock:'], 'proxy.lock.header=X-Lock:: expected an HTTP header name (RFC 9110 token)'],
  [['proxy.lock.header=a\nb'], 'proxy.lock.header="a\\nb": expected an HTTP header name (RFC 9110 token)'],
  [['proxy.lock.default=urgent'], 'proxy.lock.default=urgent: expected one of foreground, background'],
  [['proxy.byquery.policy=allow'], 'proxy.byquery.policy=allow: expected one of passthrough, reject'],
  [['proxy.deadletter.dir='], 'proxy.deadletter.dir="": expected a non-empty value'],
  [['proxy.deadletter.index=DLQ'], 'proxy.deadletter.index=DLQ: expected a lowercase Elasticsearch index name'],
  [['proxy.deadletter.index=_dlq'], 'proxy.deadletter.index=_dlq: expected a lowercase Elasticsearch index name'],
  [['proxy.max.body.bytes=lots'], `proxy.max.body.bytes=lots: expected ${BYTES}`],
  [['proxy.max.body.bytes=0'], `proxy.max.body.bytes=0: expected ${BYTES}`],
  [['proxy.upstream.timeout.ms=0'], 'proxy.upstream.timeout.ms=0: expected an integer from 1 to 2147483647'],
  [['proxy.shutdown.timeout.ms=1e3'], 'proxy.shutdown.timeout.ms=1e3: expected an integer from 0 to 2147483647'],
  [['proxy.alias.cache.ttl.ms=soon'], 'proxy.alias.cache.ttl.ms=soon: expected an integer from 0 to 2147483647'],
  [['proxy.fencing=true'], 'proxy.fencing=true: expected one of off, on'],
  [['proxy.log.level=verbose'], `proxy.log.level=verbose: expected ${LOG_LEVELS}`],
  [['proxy.log.format=xml'], 'proxy.log.format=xml: expected one of json, pretty'],
  [['proxy.log.slow.lock.ms=-1'], 'proxy.log.slow.lock.ms=-1: expected an integer from 0 to 2147483647'],
  [
    ['proxy.auth.verify=off', 'proxy.priority.foreground.allow=ingest'],
    `proxy.priority.foreground.allow=ingest: expected ${EMPTY_ALLOW_WITHOUT_CHECKS}`,
  ],
  [['proxy.auth.verify=off', 'proxy.priority.foreground.allow=role:ui,alice'], `proxy.priority.foreground.allow=role:ui,alice: expected ${EMPTY_ALLOW_WITHOUT_CHECKS}`],
  [['zookeeper.servers'], '--set zookeeper.servers: expected key=value'],
  [['=value'], '--set =value: expected key=value'],
];

describe('each validation error is one line naming the key, the value and what was expected', () => {
  it.each(FLAG_ERRORS)('--set %j', (flags, message) => {
    expect(configErrorOf({ flags })).toBe(message);
  });

  it('every message is a single line with code CONFIG_INVALID', () => {
    for (const [flags] of FLAG_ERRORS) {
      let caught: unknown;
      try {
        load({ flags });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect(caught).toMatchObject({ code: 'CONFIG_INVALID', message: expect.not.stringMatching(/[\r\n]/) });
    }
  });

  it('never shows a secret value', () => {
    const messages = FLAG_ERRORS.map(([flags]) => configErrorOf({ flags }));
    expect(messages.join('\n')).not.toMatch(/hunter2|secret|a2V5/);
  });
});

describe('errors from the file and the environment', () => {
  let files: ReturnType<typeof tempConfigDir>;
  beforeEach(() => {
    files = tempConfigDir();
  });
  afterEach(() => files.cleanup());

  it('a reload to proxy.auth.verify=off with a foreground allow list is refused: the running settings stay', () => {
    const configFile = files.write('auth.properties', 'proxy.auth.verify=on\nproxy.priority.foreground.allow=ingest\n');
    const running = load({ configFile });
    files.write('auth.properties', 'proxy.auth.verify=off\nproxy.priority.foreground.allow=ingest\n');
    const signals = new EventEmitter();
    const errors: unknown[] = [];
    const reloaded: unknown[] = [];
    const stop = watchSettings({
      configFile: null,
      reread: () => load({ configFile }),
      target: { reload: (next) => (reloaded.push(next), { live: [], restart: [] }) },
      logger: { error: (fields: unknown) => errors.push(fields), info: () => undefined, warn: () => undefined } as unknown as Logger,
      signals: signals as unknown as SettingsWatcherOptions['signals'],
    });
    signals.emit('SIGHUP');
    stop();
    expect(running.proxy.auth.verify).toBe('on');
    expect(reloaded).toEqual([]);
    expect(errors).toEqual([{ trigger: 'SIGHUP', error: `proxy.priority.foreground.allow=ingest: expected ${EMPTY_ALLOW_WITHOUT_CHECKS}` }]);
  });

  it('names the key as spelled in the file', () => {
    const configFile = files.write('z.properties', '# the original file with one change\nzookeeper.foregound.lock.prefix=Z\n');
    expect(configErrorOf({ configFile })).toBe(
      'zookeeper.foregound.lock.prefix=Z: expected a prefix that sorts before the background prefix "B"',
    );
  });

  it('names the environment variable that carried the value', () => {
    expect(configErrorOf({ env: { ES_LOCK_PROXY_PROXY_LISTEN_PORT: 'abc' } })).toBe(`ES_LOCK_PROXY_PROXY_LISTEN_PORT=abc: expected ${PORT}`);
    expect(configErrorOf({ env: { LOG_LEVEL: 'loud' } })).toBe(`LOG_LEVEL=loud: expected ${LOG_LEVELS}`);
  });

  it('two spellings of one key in the environment with different values', () => {
    const env = {
      ES_LOCK_PROXY_ZOOKEEPER_FOREGOUND_TASK_TIMEOUT: '1',
      ES_LOCK_PROXY_ZOOKEEPER_FOREGROUND_TASK_TIMEOUT: '2',
    };
    expect(configErrorOf({ env })).toBe(
      'ES_LOCK_PROXY_ZOOKEEPER_FOREGROUND_TASK_TIMEOUT=2: expected one spelling per key, but ES_LOCK_PROXY_ZOOKEEPER_FOREGOUND_TASK_TIMEOUT=1 is also set (environment)',
    );
  });

  it('a missing file: one line naming the path and the OS reason', () => {
    const missing = join(files.dir, 'missing.properties');
    expect(configErrorOf({ configFile: missing })).toBe(`${missing}: cannot read config file (ENOENT: no such file or directory)`);
  });

  it('a directory instead of a file', () => {
    const dir = join(files.dir, 'conf.d');
    mkdirSync(dir);
    expect(configErrorOf({ configFile: dir })).toBe(`${dir}: cannot read config file (EISDIR: is a directory)`);
  });

  it('a malformed unicode escape names the file and line', () => {
    const configFile = files.write('u.properties', 'a=1\nproxy.lock.header=X-\\u12\n');
    expect(configErrorOf({ configFile })).toBe(`${configFile}:2: malformed \\uXXXX escape "\\u12" (expected four hex digits)`);
  });
});
