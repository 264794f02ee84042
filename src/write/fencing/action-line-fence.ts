import type { Fence } from './fence.js';
import type { ActionMetadata, ValueBytes } from './action-metadata.js';

/**
 * The action line (bytes `start..end`, newline excluded) with the fence written into its
 * metadata, every other byte as the client sent it: `"if_seq_no":S,"if_primary_term":P`, or for a
 * missing document `"op_type":"create"`. A field the line already names — with a value, or with
 * `null`, which Elasticsearch takes as absent — gets the fence's value in place of its own;
 * the others are inserted first. Never a second key of one name: Elasticsearch refuses the whole
 * bulk then (its JSON parser has strict duplicate detection on).
 */
export function fencedActionLine(body: Buffer, start: number, end: number, meta: ActionMetadata, fence: Fence): Buffer {
  const replaced: { readonly at: ValueBytes; readonly text: string }[] = [];
  const inserted: string[] = [];
  for (const [key, text] of fenceFields(fence)) {
    const at = meta.values.get(key) ?? meta.nulls.get(key);
    if (at === undefined) inserted.push(`${JSON.stringify(key)}:${text}`);
    else replaced.push({ at, text });
  }
  replaced.sort((a, b) => a.at.start - b.at.start);
  const parts: Buffer[] = [body.subarray(start, meta.openAt)];
  if (inserted.length > 0) parts.push(Buffer.from(meta.empty ? inserted.join(',') : `${inserted.join(',')},`, 'utf8'));
  let from = meta.openAt;
  for (const { at, text } of replaced) {
    parts.push(body.subarray(from, at.start), Buffer.from(text, 'utf8'));
    from = at.end;
  }
  parts.push(body.subarray(from, end));
  return Buffer.concat(parts);
}

function fenceFields(fence: Fence): readonly (readonly [string, string])[] {
  if (fence.kind === 'create') return [['op_type', '"create"']];
  return [
    ['if_seq_no', String(fence.seqNo)],
    ['if_primary_term', String(fence.primaryTerm)],
  ];
}
