/**
 * Elasticsearch 8's optimistic concurrency control, rule for rule: `VersionType` (internal,
 * external, external_gte), the `if_seq_no`/`if_primary_term` compare-and-write checks of
 * `InternalEngine.planIndexingAsPrimary`/`planDeletionAsPrimary`, and the request validation of
 * `DocWriteRequest.validateSeqNoBasedCASParams`. The sentinels are Elasticsearch's own, so the
 * checks read like the Java they mirror.
 */
export const MATCH_ANY = -3;
export const MATCH_DELETED = -4;
export const UNASSIGNED_SEQ_NO = -2;
export const UNASSIGNED_PRIMARY_TERM = 0;
/** The stand-in's shards never fail over: every operation runs in primary term 1. */
export const PRIMARY_TERM = 1;

export type VersionType = 'internal' | 'external' | 'external_gte';

export interface Conditions {
  /** `version` (MATCH_ANY when absent; MATCH_DELETED for op_type=create). */
  readonly version: number;
  readonly versionType: VersionType;
  readonly ifSeqNo: number;
  readonly ifPrimaryTerm: number;
}

export const NO_CONDITIONS: Conditions = Object.freeze({ version: MATCH_ANY, versionType: 'internal', ifSeqNo: UNASSIGNED_SEQ_NO, ifPrimaryTerm: UNASSIGNED_PRIMARY_TERM });

/** What the engine knows of an id: a live document, or a delete tombstone kept for gc_deletes. */
export interface CurrentVersion {
  readonly version: number;
  readonly seqNo: number;
  readonly primaryTerm: number;
  readonly deleted: boolean;
}

/** `VersionType.fromString`; `external_gt` is `external`. */
export function parseVersionType(text: string): VersionType | null {
  if (text === 'internal' || text === 'external' || text === 'external_gte') return text;
  return text === 'external_gt' ? 'external' : null;
}

/** `VersionType.name()` as validation messages print it. */
export function versionTypeName(type: VersionType): string {
  return type.toUpperCase();
}

/** `DocWriteRequest.validateSeqNoBasedCASParams`: every message it would add, in its order. */
export function casValidationErrors(conditions: Conditions): string[] {
  const { version, versionType, ifSeqNo, ifPrimaryTerm } = conditions;
  const errors: string[] = [];
  if (!validVersionForWrites(versionType, version)) errors.push(`illegal version value [${version}] for version type [${versionTypeName(versionType)}]`);
  if (versionType === 'internal' && version !== MATCH_ANY && version !== MATCH_DELETED) {
    errors.push('internal versioning can not be used for optimistic concurrency control. Please use `if_seq_no` and `if_primary_term` instead');
  }
  if (ifSeqNo !== UNASSIGNED_SEQ_NO && (versionType !== 'internal' || version !== MATCH_ANY)) errors.push('compare and write operations can not use versioning');
  if (ifPrimaryTerm === UNASSIGNED_PRIMARY_TERM && ifSeqNo !== UNASSIGNED_SEQ_NO) errors.push('ifSeqNo is set, but primary term is [0]');
  if (ifPrimaryTerm !== UNASSIGNED_PRIMARY_TERM && ifSeqNo === UNASSIGNED_SEQ_NO) errors.push(`ifSeqNo is unassigned, but primary term is [${ifPrimaryTerm}]`);
  return errors;
}

function validVersionForWrites(type: VersionType, version: number): boolean {
  return type === 'internal' ? version > 0 || version === MATCH_ANY || version === MATCH_DELETED : version >= 0;
}

/**
 * The conflict a write meets against `current` (null: none), as the explanation that follows
 * `[id]: version conflict, `. Checked in Elasticsearch's order: compare-and-write first, then the
 * version type. A tombstone counts as "deleted" but keeps its version for the version types.
 */
export function conflictOf(conditions: Conditions, current: CurrentVersion | null): string | null {
  const { ifSeqNo, ifPrimaryTerm } = conditions;
  const notFoundOrDeleted = current === null || current.deleted;
  if (ifSeqNo !== UNASSIGNED_SEQ_NO) {
    if (current === null || notFoundOrDeleted) return `required seqNo [${ifSeqNo}], primary term [${ifPrimaryTerm}]. but no document was found`;
    if (current.seqNo !== ifSeqNo || current.primaryTerm !== ifPrimaryTerm) {
      return `required seqNo [${ifSeqNo}], primary term [${ifPrimaryTerm}]. current document has seqNo [${current.seqNo}] and primary term [${current.primaryTerm}]`;
    }
    return null;
  }
  const currentVersion = current?.version ?? null;
  return versionConflict(conditions.versionType, currentVersion, conditions.version, notFoundOrDeleted);
}

/** `VersionType.isVersionConflictForWrites` + `explainConflictForWrites`; `current` null is NOT_FOUND. */
function versionConflict(type: VersionType, current: number | null, expected: number, deleted: boolean): string | null {
  if (type === 'internal') {
    if (expected === MATCH_ANY) return null;
    if (expected === MATCH_DELETED) return deleted ? null : `document already exists (current version [${current}])`;
    if (current === expected) return null;
    return current === null ? `document does not exist (expected version [${expected}])` : `current version [${current}] is different than the one provided [${expected}]`;
  }
  if (current === null) return null;
  if (type === 'external' && (expected === MATCH_ANY || current >= expected)) return `current version [${current}] is higher or equal to the one provided [${expected}]`;
  if (type === 'external_gte' && (expected === MATCH_ANY || current > expected)) return `current version [${current}] is higher than the one provided [${expected}]`;
  return null;
}

/** `VersionType.updateVersion`: internal counts up from the current version (tombstones included). */
export function nextVersion(conditions: Conditions, current: CurrentVersion | null): number {
  if (conditions.versionType !== 'internal') return conditions.version;
  return current === null ? 1 : current.version + 1;
}
