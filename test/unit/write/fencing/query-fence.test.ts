import { describe, expect, it } from 'vitest';
import { fencedUrl } from '../../../../src/write/fencing/query-fence.js';

const SEQ = { kind: 'seq_no', seqNo: 41, primaryTerm: 3 } as const;
const CREATE = { kind: 'create' } as const;

describe('fencedUrl', () => {
  it.each([
    ['/i/_doc/1', '/i/_doc/1?if_seq_no=41&if_primary_term=3'],
    ['/i/_doc/1?', '/i/_doc/1?if_seq_no=41&if_primary_term=3'],
    ['/i/_doc/a%2Fb?refresh=wait_for&routing=r+1', '/i/_doc/a%2Fb?refresh=wait_for&routing=r+1&if_seq_no=41&if_primary_term=3'],
    ['/i/_doc/1?pretty&&filter_path=_id&', '/i/_doc/1?pretty&&filter_path=_id&if_seq_no=41&if_primary_term=3'],
    ['/i/_update/%C3%A9?timeout=1m&pipeline=p%20q', '/i/_update/%C3%A9?timeout=1m&pipeline=p%20q&if_seq_no=41&if_primary_term=3'],
  ])('seq_no fence: %s keeps every byte and appends the condition', (url, expected) => {
    expect(fencedUrl(url, SEQ)).toBe(expected);
  });

  it.each([
    ['/i/_doc/1', '/i/_doc/1?op_type=create'],
    ['/i/_doc/1?refresh=true', '/i/_doc/1?refresh=true&op_type=create'],
    // An explicit op_type=index is replaced, not contradicted.
    ['/i/_doc/1?op_type=index&refresh=true', '/i/_doc/1?refresh=true&op_type=create'],
  ])('create fence: %s', (url, expected) => {
    expect(fencedUrl(url, CREATE)).toBe(expected);
  });
});
