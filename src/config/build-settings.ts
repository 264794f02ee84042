import { LOCK_TIMEOUT_KEYS, type ValueOf } from './config-keys.js';
import type { AuthSettings } from '../auth/auth-settings.js';
import type { ElasticsearchSettings, ProxySettings, Settings } from './settings.js';

/** Shapes validated key values into the `Settings` object; cross-key rules were checked before. */
export function buildSettings(value: ValueOf, source: Settings['source']): Settings {
  return deepFreeze({
    zookeeper: {
      servers: value('zookeeper.servers'),
      sessionTimeoutMs: value('zookeeper.session.timeout'),
      connectionRetry: value('zookeeper.connection.retry'),
      connectionDelayMs: value('zookeeper.connection.delay'),
      foregroundPrefix: value('zookeeper.foregound.lock.prefix'),
      backgroundPrefix: value('zookeeper.backgound.lock.prefix'),
      lockRoot: value('zookeeper.lock.root'),
      auth: value('zookeeper.auth'),
      handOverMaxCount: value('zookeeper.lock.handover.max.count'),
      handOverMaxMs: value('zookeeper.lock.handover.max.ms'),
      lingerMs: value('zookeeper.lock.linger.ms'),
      documentCleanup: value('zookeeper.lock.document.cleanup'),
    },
    lock: {
      foregroundTimeoutMs: value(LOCK_TIMEOUT_KEYS.foregroundTimeoutMs),
      backgroundTimeoutMs: value(LOCK_TIMEOUT_KEYS.backgroundTimeoutMs),
    },
    elasticsearch: {
      hosts: value('elasticsearch.hosts'),
      requestRetryCount: value('elastic.request.retry.count'),
      ssl: { caFile: value('elasticsearch.ssl.ca'), verify: value('elasticsearch.ssl.verify') },
      auth: elasticsearchAuth(value),
    },
    proxy: {
      listenHost: value('proxy.listen.host'),
      listenPort: value('proxy.listen.port'),
      listenTls: listenerTls(value),
      adminHost: value('proxy.admin.host'),
      adminPort: value('proxy.admin.port'),
      adminToken: value('proxy.admin.token'),
      lockService: value('proxy.lock.service'),
      lockHeader: value('proxy.lock.header'),
      lockDefault: value('proxy.lock.default'),
      deadLetterDir: value('proxy.deadletter.dir'),
      deadLetterIndex: value('proxy.deadletter.index'),
      maxBodyBytes: value('proxy.max.body.bytes'),
      logLevel: value('proxy.log.level'),
      logFormat: value('proxy.log.format'),
      slowLockMs: value('proxy.log.slow.lock.ms'),
      byQueryPolicy: value('proxy.byquery.policy'),
      upstreamTimeoutMs: value('proxy.upstream.timeout.ms'),
      answerBufferBytes: value('proxy.answer.buffer.bytes'),
      shutdownTimeoutMs: value('proxy.shutdown.timeout.ms'),
      aliasCacheTtlMs: value('proxy.alias.cache.ttl.ms'),
      aliasCacheSize: value('proxy.alias.cache.size'),
      fencing: value('proxy.fencing'),
      auth: authSettings(value),
    },
    source,
  });
}

function elasticsearchAuth(value: ValueOf): ElasticsearchSettings['auth'] {
  const apiKey = value('elasticsearch.auth.api_key');
  if (apiKey !== null) return { kind: 'apiKey', apiKey };
  const username = value('elasticsearch.auth.username');
  const password = value('elasticsearch.auth.password');
  if (username !== null && password !== null) return { kind: 'basic', username, password };
  return null;
}

function authSettings(value: ValueOf): AuthSettings {
  return {
    verify: value('proxy.auth.verify'),
    timeoutMs: value('proxy.auth.timeout.ms'),
    cacheSize: value('proxy.auth.cache.size'),
    cacheTtlMs: value('proxy.auth.cache.ttl.ms'),
    refusalTtlMs: value('proxy.auth.cache.refusal.ttl.ms'),
    privileges: value('proxy.auth.privileges'),
    foregroundAllow: value('proxy.priority.foreground.allow'),
    foregroundDenied: value('proxy.priority.foreground.denied'),
    maxWaitingPerPrincipal: value('proxy.lock.max.waiting.per.principal'),
    refusalThrottle: {
      delayAfter: value('proxy.auth.refusal.delay.after'),
      delayMs: value('proxy.auth.refusal.delay.ms'),
      delayMaxMs: value('proxy.auth.refusal.delay.max.ms'),
      closeAfter: value('proxy.auth.refusal.close.after'),
    },
  };
}

/** Both files set or neither: the cross-key checks refused one without the other. */
function listenerTls(value: ValueOf): ProxySettings['listenTls'] {
  const certFile = value('proxy.listen.tls.cert');
  const keyFile = value('proxy.listen.tls.key');
  if (certFile === null || keyFile === null) return null;
  return { certFile, keyFile, caFile: value('proxy.listen.tls.ca') };
}

/**
 * Freezes the whole tree so no module can change settings another module relies on. URL
 * objects are frozen too, but their setters still write internal state: treat them as
 * read-only and derive new URLs with `new URL(path, host)`.
 */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
