import { ProxyError } from '../../errors/proxy-error.js';

/**
 * The read of a document's `_seq_no` failed (network, 403, 5xx): with fencing on the write is not
 * forwarded at all — never unfenced. Nothing was written, so a replay is safe (503).
 */
export function fencingReadFailed(what: string, detail: string, cause?: unknown): ProxyError {
  return new ProxyError(
    'FENCING_READ_FAILED',
    `proxy.fencing=on: could not read ${what} to fence the write (${detail}); nothing was sent to Elasticsearch`,
    cause === undefined ? {} : { cause },
  );
}
