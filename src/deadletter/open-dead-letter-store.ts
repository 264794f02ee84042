import type { Client } from '@elastic/elasticsearch';
import { createClusterClient } from '../elasticsearch/cluster-client.js';
import type { Settings } from '../config/settings.js';
import type { DeadLetterStore } from './dead-letter-store.js';
import { ElasticsearchDeadLetterStore } from './elasticsearch-dead-letter-store.js';
import { FileDeadLetterStore } from './file-dead-letter-store.js';
import { MirroredDeadLetterStore, type DeadLetterLogger } from './mirrored-dead-letter-store.js';

export interface OpenDeadLetterStoreOptions {
  /** The proxy's cluster client; without it one is created from the settings (and closed by `close`). */
  readonly cluster?: Client;
  /** Where index failures and fallbacks are reported (default: nowhere). */
  readonly logger?: DeadLetterLogger;
}

export interface OpenedDeadLetterStore extends DeadLetterStore {
  /** Releases what the factory created (a cluster client it made itself); never the caller's client. */
  close(): Promise<void>;
}

/**
 * The dead-letter queue the settings describe, the same for the proxy and the `dlq` command: the
 * files under `proxy.deadletter.dir`, mirrored to the index `proxy.deadletter.index` when set
 * (see `MirroredDeadLetterStore` for what each operation does then).
 */
export function openDeadLetterStore(settings: Settings, options: OpenDeadLetterStoreOptions = {}): OpenedDeadLetterStore {
  const files = new FileDeadLetterStore(settings.proxy.deadLetterDir);
  const index = settings.proxy.deadLetterIndex;
  if (index === null) return withClose(files, async () => {});
  const cluster = options.cluster ?? createClusterClient(settings.elasticsearch, settings.proxy.upstreamTimeoutMs);
  const store = new MirroredDeadLetterStore(files, new ElasticsearchDeadLetterStore(cluster, index), options.logger ?? SILENT);
  return withClose(store, options.cluster === undefined ? () => cluster.close() : async () => {});
}

const SILENT: DeadLetterLogger = { warn: () => {}, error: () => {} };

function withClose(store: DeadLetterStore, close: () => Promise<void>): OpenedDeadLetterStore {
  return {
    append: (record) => store.append(record),
    list: (options) => store.list(options),
    get: (id) => store.get(id),
    markReplayed: (id, status, at) => store.markReplayed(id, status, at),
    close,
  };
}
