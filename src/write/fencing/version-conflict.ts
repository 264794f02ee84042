import type { UpstreamResponse } from '../../elasticsearch/upstream-forwarder.js';
import { type BulkItemAnswer, resultOf } from '../upstream-item.js';

const CONFLICT = 'version_conflict_engine_exception';

/** Elasticsearch's reason when a single write was refused with 409 `version_conflict_engine_exception`, else null. */
export function conflictOfAnswer(upstream: UpstreamResponse): string | null {
  if (upstream.status !== 409) return null;
  try {
    return conflictOf(JSON.parse(upstream.body.toString('utf8')));
  } catch {
    return null;
  }
}

/** The same for one item of a bulk answer. */
export function conflictOfItem(answer: BulkItemAnswer | undefined): string | null {
  const [outcome] = Object.values(answer === undefined ? {} : resultOf(answer));
  if (outcome === undefined || outcome.status !== 409) return null;
  return conflictOf(outcome);
}

function conflictOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || !('error' in body)) return null;
  const { error } = body;
  if (typeof error !== 'object' || error === null || !('type' in error) || error.type !== CONFLICT) return null;
  return 'reason' in error && typeof error.reason === 'string' ? error.reason : CONFLICT;
}
