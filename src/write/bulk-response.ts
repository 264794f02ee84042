import { ProxyError } from '../errors/proxy-error.js';
import { MalformedBulkAnswer, scanBulkAnswer, type ScannedBulkAnswer } from './bulk-answer-scanner.js';
import { itemFailed } from './bulk-items.js';
import { type BulkItemAnswer, UpstreamItem } from './upstream-item.js';

const COMMA = 0x2c;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** Reads an upstream `_bulk` answer; an answer we cannot read is an upstream fault (502). */
export function parseBulkResponse(body: Buffer, expectedItems: number): ScannedBulkAnswer {
  let scanned: ScannedBulkAnswer;
  try {
    scanned = scanBulkAnswer(body);
  } catch (error) {
    if (!(error instanceof MalformedBulkAnswer) && !(error instanceof SyntaxError)) throw error;
    throw new ProxyError('UPSTREAM_RESET', `Elasticsearch answered a _bulk request with a body that is not a _bulk answer (${error.message})`, { cause: error });
  }
  if (scanned.items.length !== expectedItems) {
    throw new ProxyError('UPSTREAM_RESET', `Elasticsearch answered a _bulk request of ${expectedItems} items with ${scanned.items.length} items`);
  }
  return scanned;
}

/**
 * Builds the merged answer: Elasticsearch's items copied as it wrote them, the proxy's own written
 * out; `errors` is true when any item failed, as Elasticsearch sets it.
 */
export function renderBulkResponse(took: number, items: readonly BulkItemAnswer[]): Buffer {
  let errors = false;
  let length = 0;
  let written: (Buffer | undefined)[] | null = null;
  items.forEach((item, i) => {
    if (item instanceof UpstreamItem) {
      errors ||= item.failed;
      length += item.byteLength;
      return;
    }
    errors ||= itemFailed(item);
    const bytes = Buffer.from(JSON.stringify(item));
    (written ??= [])[i] = bytes;
    length += bytes.length;
  });
  const head = `{"took":${JSON.stringify(took)},"errors":${String(errors)},"items":[`;
  const answer = Buffer.allocUnsafe(head.length + length + Math.max(0, items.length - 1) + 2);
  let at = answer.write(head, 'latin1');
  items.forEach((item, i) => {
    if (i > 0) answer[at++] = COMMA;
    at += item instanceof UpstreamItem ? item.copyInto(answer, at) : (written?.[i]?.copy(answer, at) ?? 0);
  });
  answer[at++] = CLOSE_ARRAY;
  answer[at++] = CLOSE_OBJECT;
  return answer;
}
