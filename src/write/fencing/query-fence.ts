import { queryParams, withoutParams } from '../../elasticsearch/request-params.js';
import type { Fence } from './fence.js';

const OP_TYPE = new Set(['op_type']);

/**
 * The client's raw URL with the fence's parameters appended; every other byte is kept. A create
 * fence replaces an explicit `op_type=index` (Elasticsearch would take the last value anyway, but
 * one value is clearer to read in the cluster's logs).
 */
export function fencedUrl(url: string, fence: Fence): string {
  if (fence.kind === 'seq_no') return withParams(url, `if_seq_no=${fence.seqNo}&if_primary_term=${fence.primaryTerm}`);
  const base = queryParams(url).has('op_type') ? withoutParams(url, OP_TYPE) : url;
  return withParams(base, 'op_type=create');
}

function withParams(url: string, params: string): string {
  const question = url.indexOf('?');
  if (question === -1) return `${url}?${params}`;
  return url.endsWith('?') || url.endsWith('&') ? `${url}${params}` : `${url}&${params}`;
}
