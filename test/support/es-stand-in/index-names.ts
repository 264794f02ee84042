import { DateMathError } from '../../../src/classify/date-math/date-math-error.js';
import { isDateMathName, resolveDateMathName } from '../../../src/classify/date-math/date-math-index-name.js';
import { errorResult, illegalArgument, type OperationResult } from './es-errors.js';

/**
 * The refusals of an index name Elasticsearch answers before it writes anything: date math it
 * cannot parse (ElasticsearchParseException, 400 `parse_exception`; the stand-in evaluates date math
 * with the proxy's port of IndexNameExpressionResolver, whose cases are checked against
 * Elasticsearch's and java.time's in test/unit/classify/date-math), and a write through an alias
 * that has no write index (Elasticsearch: server/src/main/java/org/elasticsearch/cluster/metadata/IndexAbstraction.java,
 * and the message of IndexNameExpressionResolver's write-index check).
 */
export function dateMathRefusal(name: string): OperationResult | null {
  if (!isDateMathName(name)) return null;
  try {
    resolveDateMathName(name, Date.now());
    return null;
  } catch (error) {
    if (error instanceof DateMathError && error.kind === 'invalid') return errorResult(400, { type: 'parse_exception', reason: error.message });
    throw error;
  }
}

export function noWriteIndexRefusal(alias: string): OperationResult {
  return illegalArgument(
    `no write index is defined for alias [${alias}]. The write index may be explicitly disabled using is_write_index=false or the alias points to multiple indices without one being designated as a write index`,
  );
}
