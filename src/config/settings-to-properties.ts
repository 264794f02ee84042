import { formatByteSize } from './byte-size.js';
import { LOCK_TIMEOUT_KEYS, type ConfigKey } from './config-keys.js';
import type { Settings } from './settings.js';

/**
 * The inverse of `buildSettings`: every key's effective value as properties-file text ('' when
 * unset). Reload diffs and the redacted startup line are computed from it, and the unit tests
 * check that loading this text back yields the same settings, so the two mappings cannot drift.
 */
export function settingsToProperties(settings: Settings): Record<ConfigKey, string> {
  const { zookeeper, lock, elasticsearch, proxy } = settings;
  const auth = elasticsearch.auth;
  return {
    'zookeeper.servers': zookeeper.servers,
    'zookeeper.session.timeout': String(zookeeper.sessionTimeoutMs),
    'zookeeper.connection.retry': String(zookeeper.connectionRetry),
    'zookeeper.connection.delay': String(zookeeper.connectionDelayMs),
    'zookeeper.foregound.lock.prefix': zookeeper.foregroundPrefix,
    'zookeeper.backgound.lock.prefix': zookeeper.backgroundPrefix,
    [LOCK_TIMEOUT_KEYS.foregroundTimeoutMs]: String(lock.foregroundTimeoutMs),
    [LOCK_TIMEOUT_KEYS.backgroundTimeoutMs]: String(lock.backgroundTimeoutMs),
    'elastic.request.retry.count': String(elasticsearch.requestRetryCount),
    'elasticsearch.hosts': elasticsearch.hosts.map((url) => url.href).join(','),
    'elasticsearch.ssl.ca': elasticsearch.ssl.caFile ?? '',
    'elasticsearch.ssl.verify': String(elasticsearch.ssl.verify),
    'elasticsearch.auth.username': auth?.kind === 'basic' ? auth.username : '',
    'elasticsearch.auth.password': auth?.kind === 'basic' ? auth.password : '',
    'elasticsearch.auth.api_key': auth?.kind === 'apiKey' ? auth.apiKey : '',
    'proxy.listen.host': proxy.listenHost,
    'proxy.listen.port': String(proxy.listenPort),
    'proxy.listen.tls.cert': proxy.listenTls?.certFile ?? '',
    'proxy.listen.tls.key': proxy.listenTls?.keyFile ?? '',
    'proxy.listen.tls.ca': proxy.listenTls?.caFile ?? '',
    'proxy.admin.host': proxy.adminHost,
    'proxy.admin.port': String(proxy.adminPort),
    'proxy.admin.token': proxy.adminToken ?? '',
    'proxy.lock.service': proxy.lockService,
    'zookeeper.lock.root': zookeeper.lockRoot,
    'zookeeper.auth': zookeeper.auth === null ? '' : `${zookeeper.auth.scheme}:${zookeeper.auth.credentials}`,
    'zookeeper.lock.handover.max.count': String(zookeeper.handOverMaxCount),
    'zookeeper.lock.handover.max.ms': String(zookeeper.handOverMaxMs),
    'zookeeper.lock.linger.ms': String(zookeeper.lingerMs),
    'zookeeper.lock.document.cleanup': zookeeper.documentCleanup,
    'proxy.lock.header': proxy.lockHeader,
    'proxy.lock.default': proxy.lockDefault,
    'proxy.byquery.policy': proxy.byQueryPolicy,
    'proxy.deadletter.dir': proxy.deadLetterDir,
    'proxy.deadletter.index': proxy.deadLetterIndex ?? '',
    'proxy.max.body.bytes': formatByteSize(proxy.maxBodyBytes),
    'proxy.upstream.timeout.ms': String(proxy.upstreamTimeoutMs),
    'proxy.answer.buffer.bytes': formatByteSize(proxy.answerBufferBytes),
    'proxy.shutdown.timeout.ms': String(proxy.shutdownTimeoutMs),
    'proxy.alias.cache.ttl.ms': String(proxy.aliasCacheTtlMs),
    'proxy.alias.cache.size': String(proxy.aliasCacheSize),
    'proxy.fencing': proxy.fencing,
    'proxy.log.level': proxy.logLevel,
    'proxy.log.format': proxy.logFormat,
    'proxy.log.slow.lock.ms': String(proxy.slowLockMs),
    'proxy.auth.verify': proxy.auth.verify,
    'proxy.auth.timeout.ms': String(proxy.auth.timeoutMs),
    'proxy.auth.cache.size': String(proxy.auth.cacheSize),
    'proxy.auth.cache.ttl.ms': String(proxy.auth.cacheTtlMs),
    'proxy.auth.cache.refusal.ttl.ms': String(proxy.auth.refusalTtlMs),
    'proxy.auth.privileges': proxy.auth.privileges,
    'proxy.priority.foreground.allow': proxy.auth.foregroundAllow.join(','),
    'proxy.priority.foreground.denied': proxy.auth.foregroundDenied,
    'proxy.lock.max.waiting.per.principal': String(proxy.auth.maxWaitingPerPrincipal),
    'proxy.auth.refusal.delay.after': String(proxy.auth.refusalThrottle.delayAfter),
    'proxy.auth.refusal.delay.ms': String(proxy.auth.refusalThrottle.delayMs),
    'proxy.auth.refusal.delay.max.ms': String(proxy.auth.refusalThrottle.delayMaxMs),
    'proxy.auth.refusal.close.after': String(proxy.auth.refusalThrottle.closeAfter),
  };
}
