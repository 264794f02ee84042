import { ProxyError } from '../../errors/proxy-error.js';
import type { LockKey } from '../lock-engine.js';

/**
 * Znode layout: `{lockRoot}/{index}/{id}` with both segments percent-encoded, the document node
 * holding the queue entries (`A-0000000042`) and the `privateLock` arbiter.
 *
 * Encoding keeps only `[A-Za-z0-9_-]` and writes every other UTF-8 byte as `%XX`. That makes the
 * mapping injective (decodable), never yields `.`/`..` (reserved by ZooKeeper), `/`, control or
 * non-BMP characters, and stays within 3x the 512-byte id limit of Elasticsearch.
 */
export const PRIVATE_LOCK = 'privateLock';

/** What a document's path is followed by to name its privateLock. */
export const PRIVATE_LOCK_SUFFIX = `/${PRIVATE_LOCK}`;

export function privateLockPath(docPath: string): string {
  return docPath + PRIVATE_LOCK_SUFFIX;
}

/**
 * A persistent node under the lock root whose data version counts the forced releases, so a stale
 * release cannot match a re-created document node. Its name has a `.`, which `encodeSegment` never produces: no index node can clash.
 */
export const FORCED_RELEASES = '.forced-releases';

const KEEP = /^[A-Za-z0-9_-]$/;
/** Most ids and index names need no escape: one test of the whole segment, not one per character. */
const KEEP_ALL = /^[A-Za-z0-9_-]+$/;

export function encodeSegment(value: string): string {
  if (value.length === 0) throw new ProxyError('BAD_REQUEST', 'lock key segments must not be empty');
  if (KEEP_ALL.test(value)) return value;
  let out = '';
  for (const char of value) {
    if (KEEP.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function decodeSegment(encoded: string): string {
  return decodeURIComponent(encoded);
}

/** Normalized root without a trailing slash ("/" stays "/"-less: ""). */
export function normalizeRoot(lockRoot: string): string {
  const trimmed = lockRoot.replace(/\/+$/, '');
  if (trimmed !== '' && !trimmed.startsWith('/')) return `/${trimmed}`;
  return trimmed;
}

export function forcedReleasesPath(root: string): string {
  return `${root}/${FORCED_RELEASES}`;
}

export function indexPath(root: string, index: string): string {
  return `${root}/${encodeSegment(index)}`;
}

export function documentPath(root: string, key: LockKey): string {
  return `${indexPath(root, key.index)}/${encodeSegment(key.id)}`;
}

/** The key of a document node under `root` (the inverse of `documentPath`). */
export function keyOfDocument(root: string, docPath: string): LockKey {
  const [index = '', id = ''] = docPath.slice(root.length + 1).split('/');
  return { index: decodeSegment(index), id: decodeSegment(id) };
}
