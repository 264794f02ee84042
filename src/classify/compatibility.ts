import type { IncomingHttpHeaders } from 'node:http';

const COMPATIBLE_WITH_7 = /compatible-with\s*=\s*"?\s*7(?![0-9])/i;

/**
 * Whether Elasticsearch 8 may treat the request as REST API version 7 (where the typed routes
 * live): `compatible-with=7` on Accept or Content-Type. Elasticsearch additionally demands that
 * both headers agree when a body is sent and answers 400 otherwise; we accept either header on
 * purpose — over-detecting only locks a request Elasticsearch then refuses, under-detecting would
 * let a typed write through unlocked.
 */
export function requestsCompatibleWith7(headers: IncomingHttpHeaders): boolean {
  return [headers.accept, headers['content-type']].some((value) => valuesOf(value).some((v) => COMPATIBLE_WITH_7.test(v)));
}

function valuesOf(value: string | string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}
