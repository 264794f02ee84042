import { ProxyError } from '../errors/proxy-error.js';
import type { LockKey } from '../lock/lock-engine.js';

/**
 * Which document an id names, and whether Elasticsearch accepts it: the one place the proxy
 * answers both, for single writes, bulk items, fencing and dead letters alike.
 *
 * Elasticsearch stores an id as bytes (server/src/main/java/org/elasticsearch/index/mapper/Uid.java,
 * encodeId → encodeUtf8Id → Lucene's UnicodeUtil.UTF16toUTF8, which writes an unpaired surrogate
 * as U+FFFD). Ids that differ only in their unpaired surrogates (`\ud800`, `\udc00`, `\ufffd`) are
 * therefore one document to it, and get one lock key here. (Without routing, Elasticsearch picks
 * the shard from the id's UTF-16 code units, so in an index of several shards they may also land
 * on different shards: one key for them then locks more than needed, never less.) For the same
 * reason a read that must find the document a write targets (a fence's `_mget`) sends the id as the
 * client wrote it; only the lock key is the stored form. Dead-letter records carry the lock keys.
 *
 * The length limit counts differently: server/src/main/java/org/elasticsearch/action/DocWriteRequest.java
 * (validateDocIdLength, called by IndexRequest.validate and UpdateRequest.validate, not by
 * DeleteRequest) measures `id.getBytes(StandardCharsets.UTF_8).length`, and Java's encoder writes
 * an unpaired surrogate as `?`, one byte. An id of 171 unpaired surrogates is 171 bytes there and
 * is accepted, although it is stored as 513.
 */

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** IndexRequest.MAX_DOCUMENT_ID_LENGTH_IN_BYTES. */
export const MAX_ID_BYTES = 512;

/** The id as Elasticsearch stores it: every unpaired surrogate replaced by U+FFFD, nothing else changed. */
export function storedId(id: string): string {
  return hasUnpairedSurrogate(id) ? id.replace(UNPAIRED_SURROGATE, '\ufffd') : id;
}

/** The lock key of the document `id` names in the concrete index (or alias key) `lockIndex`. */
export function documentKey(lockIndex: string, id: string): LockKey {
  return { index: lockIndex, id: storedId(id) };
}

/** The id's length in bytes as Java's `String.getBytes(UTF_8)` counts it (an unpaired surrogate: 1). */
export function javaUtf8Length(id: string): number {
  let bytes = 0;
  for (let i = 0; i < id.length; i++) {
    const unit = id.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit < 0xd800 || unit > 0xdfff) bytes += 3;
    else if (unit <= 0xdbff && isLowSurrogate(id.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 1;
  }
  return bytes;
}

export type DocumentAction = 'index' | 'create' | 'update' | 'delete';

/**
 * Elasticsearch's validation message for an id it refuses as too long, or null. Deletes are not
 * checked by Elasticsearch (DeleteRequest.validate), so they never are here.
 */
export function idTooLongMessage(action: DocumentAction, id: string): string | null {
  // A UTF-16 code unit is at most 3 bytes for Java: a short id needs no count.
  if (action === 'delete' || id.length * 3 <= MAX_ID_BYTES) return null;
  const bytes = javaUtf8Length(id);
  return bytes > MAX_ID_BYTES ? `id [${id}] is too long, must be no longer than ${MAX_ID_BYTES} bytes but was: ${bytes}` : null;
}

/**
 * The largest id (stored bytes) the proxy locks. Elasticsearch takes a delete of any id, but a lock
 * node's name holds up to three characters per byte, and ZooKeeper refuses a request over
 * jute.maxbuffer (1 MiB by default): a larger id could not be locked, so it is refused, never
 * forwarded unlocked. No document can have such an id (indexing one is refused above 512 bytes).
 */
export const MAX_LOCKABLE_ID_BYTES = 64 * 1024;

/** The proxy's 400 for an id it cannot lock, or null (the id is not echoed: it is large). */
export function unlockableId(id: string): ProxyError | null {
  if (id.length <= MAX_LOCKABLE_ID_BYTES / 3) return null;
  const bytes = Buffer.byteLength(storedId(id), 'utf8');
  if (bytes <= MAX_LOCKABLE_ID_BYTES) return null;
  return new ProxyError('BAD_REQUEST', `an id of ${bytes} bytes is too long to lock (at most ${MAX_LOCKABLE_ID_BYTES})`, { meta: { bytes } });
}

/**
 * The answer Elasticsearch gives to a request whose ids it refuses (ActionRequestValidationException:
 * the messages numbered from 1, each ending in `;`). Nothing of that request is written, so the proxy
 * answers it without forwarding or locking anything.
 */
export function idsTooLong(messages: readonly string[]): ProxyError {
  const numbered = messages.map((message, n) => `${n + 1}: ${message};`).join('');
  return new ProxyError('ID_TOO_LONG', `Validation Failed: ${numbered}`);
}

function hasUnpairedSurrogate(id: string): boolean {
  for (let i = 0; i < id.length; i++) {
    const unit = id.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit <= 0xdbff && isLowSurrogate(id.charCodeAt(i + 1))) i++;
    else return true;
  }
  return false;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
