import { illegalArgument, type OperationResult } from './es-errors.js';
import { MATCH_ANY, NO_CONDITIONS, parseVersionType, UNASSIGNED_PRIMARY_TERM, UNASSIGNED_SEQ_NO, type Conditions, type VersionType } from './version-rules.js';

/** A parsed parameter, or the 400 Elasticsearch answers while parsing it. */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: OperationResult };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const rejected = <T>(reason: string): Parsed<T> => ({ ok: false, failure: illegalArgument(reason) });

/** Raw values of the concurrency-control parameters, from a query string or a bulk action line. */
export interface RawConditions {
  readonly version?: unknown;
  readonly versionType?: unknown;
  readonly ifSeqNo?: unknown;
  readonly ifPrimaryTerm?: unknown;
}

/** `version`, `version_type`, `if_seq_no`, `if_primary_term` of a single-document request's query. */
export function rawConditionsOfQuery(query: URLSearchParams): RawConditions {
  return {
    version: query.get('version') ?? undefined,
    versionType: query.get('version_type') ?? undefined,
    ifSeqNo: query.get('if_seq_no') ?? undefined,
    ifPrimaryTerm: query.get('if_primary_term') ?? undefined,
  };
}

/** The same keys of a bulk action's metadata. */
export function rawConditionsOfMeta(meta: Readonly<Record<string, unknown>>): RawConditions {
  return { version: meta.version, versionType: meta.version_type, ifSeqNo: meta.if_seq_no, ifPrimaryTerm: meta.if_primary_term };
}

/**
 * Parses in RestIndexAction's order; the first bad value answers 400 illegal_argument_exception
 * with Elasticsearch's message (`paramAsLong`, `VersionType.fromString`, `setIfSeqNo`, `setIfPrimaryTerm`).
 */
export function parseConditions(raw: RawConditions): Parsed<Conditions> {
  const version = parseLong('version', raw.version, MATCH_ANY);
  if (!version.ok) return version;
  let versionType: VersionType = NO_CONDITIONS.versionType;
  if (raw.versionType !== undefined) {
    const parsed = parseVersionType(String(raw.versionType));
    if (parsed === null) return rejected(`No version type match [${String(raw.versionType)}]`);
    versionType = parsed;
  }
  const ifSeqNo = parseLong('if_seq_no', raw.ifSeqNo, UNASSIGNED_SEQ_NO);
  if (!ifSeqNo.ok) return ifSeqNo;
  if (ifSeqNo.value < 0 && ifSeqNo.value !== UNASSIGNED_SEQ_NO) return rejected(`sequence numbers must be non negative. got [${ifSeqNo.value}].`);
  const ifPrimaryTerm = parseLong('if_primary_term', raw.ifPrimaryTerm, UNASSIGNED_PRIMARY_TERM);
  if (!ifPrimaryTerm.ok) return ifPrimaryTerm;
  if (ifPrimaryTerm.value < 0) return rejected(`primary term must be non negative. got [${ifPrimaryTerm.value}]`);
  return ok({ version: version.value, versionType, ifSeqNo: ifSeqNo.value, ifPrimaryTerm: ifPrimaryTerm.value });
}

/** `RestRequest.paramAsLong` (JSON numbers from bulk metadata pass as they are). */
export function parseLong(name: string, raw: unknown, fallback: number): Parsed<number> {
  if (raw === undefined || raw === null) return ok(fallback);
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return ok(raw);
  const text = String(raw);
  if (/^[+-]?\d+$/.test(text) && Number.isSafeInteger(Number(text))) return ok(Number(text));
  return rejected(`Failed to parse long parameter [${name}] with value [${text}]`);
}

/** `RestRequest.paramAsInt`. */
export function parseInt32(name: string, raw: unknown, fallback: number): Parsed<number> {
  const parsed = parseLong(name, raw, fallback);
  if (parsed.ok && Math.abs(parsed.value) > 2 ** 31) return rejected(`Failed to parse int parameter [${name}] with value [${String(raw)}]`);
  if (!parsed.ok) return rejected(`Failed to parse int parameter [${name}] with value [${String(raw)}]`);
  return parsed;
}

/**
 * `op_type` of `PUT /{index}/_doc/{id}` (`IndexRequest.opType(String)`) or, with `createRoute`,
 * of `/{index}/_create/{id}` (`RestIndexAction.CreateHandler.validateOpType`).
 */
export function parseOpType(raw: string | null, createRoute: boolean): Parsed<'index' | 'create'> {
  if (createRoute) {
    if (raw !== null && raw.toLowerCase() !== 'create') return rejected(`opType must be 'create', found: [${raw}]`);
    return ok('create');
  }
  if (raw === null) return ok('index');
  const lower = raw.toLowerCase();
  if (lower === 'create' || lower === 'index') return ok(lower);
  return rejected(`opType must be 'create' or 'index', found: [${raw}]`);
}
