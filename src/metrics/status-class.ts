import type { StatusClass } from './metric-set.js';

/** Bounded label values: anything outside HTTP's range is `other` rather than a new series. */
export function statusClassOf(status: number): StatusClass {
  if (!Number.isInteger(status)) return 'other';
  switch (Math.floor(status / 100)) {
    case 1:
      return '1xx';
    case 2:
      return '2xx';
    case 3:
      return '3xx';
    case 4:
      return '4xx';
    case 5:
      return '5xx';
    default:
      return 'other';
  }
}
