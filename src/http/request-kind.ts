import type { RouteClassification } from '../classify/route-parser.js';

/** Request kinds as the edge distinguishes them (the `kind` label of `requests_total`). */
export type RequestKind = 'write' | 'bulk' | 'passthrough' | 'auto_id' | 'by_query';

export const KIND_OF_ROUTE: Readonly<Record<RouteClassification['kind'], RequestKind>> = {
  passthrough: 'passthrough',
  single: 'write',
  bulk: 'bulk',
  'auto-id': 'auto_id',
  'by-query': 'by_query',
};

/** Told once per client request whose answer started (metrics). */
export interface RequestEvents {
  requestServed(kind: RequestKind, status: number): void;
}
