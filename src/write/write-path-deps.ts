import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import type { UpstreamForwarder, ForwardRequest } from '../elasticsearch/upstream-forwarder.js';
import { PRESENTATION_PARAMS, withoutParams } from '../elasticsearch/request-params.js';
import type { LockEngine, LockOwner, Priority } from '../lock/lock-engine.js';
import type { DeadLetterStore } from '../deadletter/dead-letter-store.js';
import type { AliasResolver } from './alias-resolver.js';
import type { WriteRequest } from './write-request.js';
import type { WriteObserver } from './write-observer.js';
import type { FenceReader } from './fencing/fence-reader.js';

export interface WritePathDeps {
  /** Read on every request so that live-reloaded timeouts apply to the next request. */
  readonly settings: () => Settings;
  readonly locks: LockEngine;
  readonly forwarder: UpstreamForwarder;
  readonly aliases: AliasResolver;
  readonly deadLetters: DeadLetterStore;
  readonly observer: WriteObserver;
  readonly logger: Logger;
  /** Reads documents' `_seq_no` for fenced writes (proxy.fencing=on). */
  readonly fenceReader: FenceReader;
}

const HOST = hostname();

export function ownerOf(exchange: WriteRequest): LockOwner {
  return { host: HOST, pid: process.pid, requestId: exchange.requestId };
}

export function lockTimeoutMs(settings: Settings, priority: Priority): number {
  return priority === 'foreground' ? settings.lock.foregroundTimeoutMs : settings.lock.backgroundTimeoutMs;
}

export interface ForwardShape {
  /** Another body than the client's (a sub-bulk). */
  readonly body?: Buffer;
  /**
   * The proxy reads the answer (bulk merge, `_index` check): ask for it uncompressed. The
   * official client sends `accept-encoding: gzip`; a gzipped answer could not be merged.
   */
  readonly readsAnswer?: boolean;
  /** Checked at the moment the request is handed to the upstream socket (see `ForwardRequest`). */
  readonly beforeSend?: ForwardRequest['beforeSend'];
  /**
   * The proxy merges the answer with others (a sub-bulk): ask without `filter_path` and `pretty`
   * so that every item comes back; the merged answer gets the client's options.
   */
  readonly mergesAnswer?: boolean;
  /** Another raw URL than the client's (a fenced write: the client's plus the fence's parameters). */
  readonly url?: string;
}

/**
 * The request to send upstream: the client's own, minus the proxy's lock header; its body is the
 * one the edge read (as the client sent it, compressed or not), or the client's stream for writes
 * that need no lock. A body the proxy built (`shape.body`, from the inflated content) goes
 * uncompressed, without the client's `Content-Encoding`.
 */
export function forwardRequestOf(exchange: WriteRequest, settings: Settings, shape: ForwardShape = {}): ForwardRequest {
  const lockHeader = settings.proxy.lockHeader.toLowerCase();
  const url = shape.url ?? exchange.req.url ?? '/';
  const readsAnswer = shape.readsAnswer === true || shape.mergesAnswer === true;
  const dropHeaders = [lockHeader];
  if (readsAnswer) dropHeaders.push('accept-encoding');
  if (shape.body !== undefined && exchange.inflatedFrom !== null) dropHeaders.push('content-encoding');
  return {
    method: exchange.req.method ?? 'GET',
    url: shape.mergesAnswer === true ? withoutParams(url, PRESENTATION_PARAMS) : url,
    rawHeaders: exchange.req.rawHeaders,
    dropHeaders,
    body: shape.body ?? (exchange.bodyStreams ? exchange.req : (exchange.inflatedFrom?.bytes ?? exchange.body)),
    ...(shape.beforeSend !== undefined ? { beforeSend: shape.beforeSend } : {}),
  };
}
