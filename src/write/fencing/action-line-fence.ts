import type { Fence } from './fence.js';
import type { ActionMetadata } from './action-metadata.js';

/**
 * The action line (bytes `start..end`, newline excluded) with the fence written into its
 * metadata, every other byte as the client sent it: `"if_seq_no":S,"if_primary_term":P` inserted
 * first, or for a missing document `op_type` set to `create` (its value replaced when the line
 * names one: Elasticsearch refuses a duplicate key).
 */
export function fencedActionLine(body: Buffer, start: number, end: number, meta: ActionMetadata, fence: Fence): Buffer {
  if (fence.kind === 'create') {
    const opType = meta.values.get('op_type');
    if (opType !== undefined) return spliced(body, start, end, opType.start, opType.end, '"create"');
    return inserted(body, start, end, meta, '"op_type":"create"');
  }
  return inserted(body, start, end, meta, `"if_seq_no":${fence.seqNo},"if_primary_term":${fence.primaryTerm}`);
}

function inserted(body: Buffer, start: number, end: number, meta: ActionMetadata, fields: string): Buffer {
  return spliced(body, start, end, meta.openAt, meta.openAt, meta.empty ? fields : `${fields},`);
}

function spliced(body: Buffer, start: number, end: number, cutStart: number, cutEnd: number, text: string): Buffer {
  return Buffer.concat([body.subarray(start, cutStart), Buffer.from(text, 'utf8'), body.subarray(cutEnd, end)]);
}
