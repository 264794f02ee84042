import { ProxyError } from '../errors/proxy-error.js';
import type { Priority } from '../lock/lock-engine.js';

const SPELLINGS: Readonly<Record<string, Priority>> = {
  foreground: 'foreground',
  fg: 'foreground',
  background: 'background',
  bg: 'background',
};

/**
 * Reads the lock-priority header (`proxy.lock.header`): `foreground`/`background` or `fg`/`bg`,
 * any case, surrounding whitespace ignored; absent → `defaultPriority`. Repeated headers (an array,
 * or Node's comma-joined form) are accepted when they all name the same priority. Anything else —
 * an empty value included — is a client mistake: 400 naming the header and the allowed values.
 */
export function parsePriority(
  headerValue: string | readonly string[] | undefined,
  defaultPriority: Priority,
  headerName: string,
): Priority {
  if (headerValue === undefined) return defaultPriority;
  const values = (typeof headerValue === 'string' ? [headerValue] : headerValue).flatMap((value) => value.split(','));
  const priorities = new Set(values.map((value) => SPELLINGS[value.trim().toLowerCase()]));
  const [only] = priorities;
  if (priorities.size !== 1 || only === undefined) throw badHeader(headerName, headerValue);
  return only;
}

function badHeader(headerName: string, headerValue: string | readonly string[]): ProxyError {
  const shown = typeof headerValue === 'string' ? headerValue : headerValue.join(', ');
  return new ProxyError(
    'BAD_LOCK_HEADER',
    `header [${headerName}] has an invalid value [${shown}]; allowed values are [foreground], [background], [fg] and [bg] (case-insensitive), given once`,
    { meta: { header: headerName } },
  );
}
