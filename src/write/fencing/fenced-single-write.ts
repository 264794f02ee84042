import type { SingleWriteOp } from '../../classify/route-parser.js';
import { queryParams } from '../../elasticsearch/request-params.js';
import type { UpstreamResponse } from '../../elasticsearch/upstream-forwarder.js';
import type { HeldLock } from '../../lock/lock-engine.js';
import type { WriteRequest } from '../write-request.js';
import type { WritePathDeps } from '../write-path-deps.js';
import { fenceFor, type FenceableAction } from './fence.js';
import { fenceableAction, QUERY_OP_TYPE } from './fence-policy.js';
import { fencedUrl } from './query-fence.js';
import { conflictOfAnswer } from './version-conflict.js';
import { writeRoutingOf } from './write-routing.js';

/** Tries of a fenced write refused while its lock was still usable (the document changed outside the proxy's serialization). */
export const MAX_FENCED_TRIES = 3;

export interface SingleFenceTarget {
  readonly op: SingleWriteOp;
  /** The index a realtime GET must name (an alias's write index). */
  readonly readIndex: string;
  /** The alias's `index_routing`, which the write goes with in place of the URL's; null: none. */
  readonly indexRouting: string | null;
  /** The lock key's index, as logs and metrics name the document. */
  readonly lockIndex: string;
  readonly id: string;
}

/** Sends the request to the given raw URL; rejects with a ProxyError when it failed. */
export type SendTo = (url: string) => Promise<UpstreamResponse>;

/** The action to fence, or null when the write goes as it came (see fence-policy.ts). */
export function singleFenceableAction(exchange: WriteRequest, op: SingleWriteOp): FenceableAction | null {
  const params = queryParams(exchange.req.url ?? '/');
  return fenceableAction(op, (name) => params.get(name), () => exchange.body, QUERY_OP_TYPE);
}

/**
 * Read under the lock, forward with the fence, and on a 409 `version_conflict_engine_exception`:
 * - lock still usable: the document changed between our read and our write outside the proxy's
 *   serialization (a stale write landing, a writer bypassing the proxy): read again and retry, so
 *   that the holder's write ends on top — at most MAX_FENCED_TRIES tries, then the 409 is relayed;
 * - lock lost: this is the stale write the fence exists for — relayed as Elasticsearch gave it,
 *   reported (warn log with the key, `es_lock_proxy_fenced_writes_total`).
 * A failed read rejects (FENCING_READ_FAILED) before anything is sent.
 */
export async function forwardFenced(
  deps: WritePathDeps,
  exchange: WriteRequest,
  lock: HeldLock,
  target: SingleFenceTarget & { readonly action: FenceableAction },
  send: SendTo,
): Promise<UpstreamResponse> {
  const url = exchange.req.url ?? '/';
  const routing = writeRoutingOf(queryParams(url).get('routing') ?? null, null, target.indexRouting);
  for (let tries = 1; ; tries++) {
    const state = await deps.fenceReader.readOne({ index: target.readIndex, id: target.id, routing }, exchange.req.headers.authorization);
    const fence = fenceFor(target.action, state);
    const upstream = await send(fence === null ? url : fencedUrl(url, fence));
    const conflict = fence === null ? null : conflictOfAnswer(upstream);
    if (conflict === null) return upstream;
    if (!lock.usable()) {
      deps.observer.fencedWrite({ requestId: exchange.requestId, index: target.lockIndex, id: target.id, action: target.action, reason: conflict });
      return upstream;
    }
    if (tries >= MAX_FENCED_TRIES) return upstream;
  }
}
