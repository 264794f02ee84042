import { type ZkError, toZkError } from '../zk-errors.js';

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
