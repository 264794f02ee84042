/**
 * What a realtime read under the lock found of a document, and the compare-and-set condition a
 * write derives from it. A write that outlives its lock carries the condition of its
 * own read; the next holder's write changed the document since, so Elasticsearch refuses the
 * stale one with 409 `version_conflict_engine_exception`.
 */
export type DocumentState =
  | { readonly found: true; readonly seqNo: number; readonly primaryTerm: number }
  | { readonly found: false };

export type Fence =
  /** The document exists: `if_seq_no` / `if_primary_term`. */
  | { readonly kind: 'seq_no'; readonly seqNo: number; readonly primaryTerm: number }
  /** The document is missing: an index goes as a create, which Elasticsearch refuses once it exists. */
  | { readonly kind: 'create' };

/** The actions the proxy may fence; `create` needs no fence (Elasticsearch refuses it for an existing document). */
export type FenceableAction = 'index' | 'update' | 'delete';

export const MISSING: DocumentState = Object.freeze({ found: false });

/**
 * The fence of `action` against `state`; `null` when none exists: an update or delete of a
 * missing document (`if_seq_no` cannot say "still missing"; Elasticsearch answers 404 anyway
 * unless the document appears meanwhile — a documented gap).
 */
export function fenceFor(action: FenceableAction, state: DocumentState): Fence | null {
  if (state.found) return { kind: 'seq_no', seqNo: state.seqNo, primaryTerm: state.primaryTerm };
  return action === 'index' ? { kind: 'create' } : null;
}
