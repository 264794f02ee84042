import { type ZkError, toZkError } from '../zk-errors.js';

/**
 * How one pipelined round trip ended for the request whose outcome matters (a create, a
 * transaction): `unknown` when the connection dropped before its answer (it may or may not have
 * been applied: the caller reconciles), `gone` when the session ended (its nodes died with it).
 */
export type Failure = { readonly kind: 'unknown' } | { readonly kind: 'gone' } | { readonly kind: 'refused'; readonly error: ZkError };

export function classifyFailure(reason: unknown): Failure {
  const error = toZkError(reason);
  if (error.connectionLost) return { kind: 'unknown' };
  if (error.sessionGone) return { kind: 'gone' };
  return { kind: 'refused', error };
}
