import { ZK_RC, ZkError, type ZkErrorCode, toZkError } from '../../../zookeeper-client/zk-errors.js';

/**
 * How one pipelined round trip ended for the request whose outcome matters (a create, a
 * transaction): `unknown` when its answer does not tell whether it was applied (the connection
 * dropped first, or SESSIONMOVED / MARSHALLINGERROR: the caller reconciles), `gone` when the
 * session ended (its nodes died with it).
 */
export type Failure = { readonly kind: 'unknown' } | { readonly kind: 'gone' } | { readonly kind: 'refused'; readonly error: ZkError };

export function classifyFailure(reason: unknown): Failure {
  const error = toZkError(reason);
  if (error.outcomeUnknown) return { kind: 'unknown' };
  if (error.sessionGone) return { kind: 'gone' };
  return { kind: 'refused', error };
}

/**
 * Our create was applied and the read sent beside it failed (throttled, say): the loop does not
 * know the queue around what it now owns. It reconciles — reads again and adopts what is ours —
 * unless the session ended with the node. Taken as a refusal, the request failed and the node
 * stayed, orphaned, for as long as the session lived: every writer of the document waited on it.
 */
export type Unread = { readonly kind: 'unread' };

export function readFailedBesideCreate(reason: unknown): Unread | Failure {
  const failure = classifyFailure(reason);
  return failure.kind === 'gone' ? failure : { kind: 'unread' };
}

/** A transaction ZooKeeper refused by one of its operations (`code`), as a failure of the round trip. */
export function refusedBy(code: ZkErrorCode): Failure {
  const rc = code === 'UNKNOWN' ? ZK_RC.SYSTEMERROR : ZK_RC[code];
  return { kind: 'refused', error: new ZkError(rc, `transaction refused: ${code}`) };
}
