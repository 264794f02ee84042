import { describe, expect, it } from 'vitest';
import type { LockRequest } from '../../../src/lock/lock-engine.js';
import { encodeNodeData, encodeRequestNodeData, parseNodeData, type OwnNodeData } from '../../../src/lock/lock-node-data.js';

describe('lock node data', () => {
  const request = (requestId: string, message?: string): LockRequest => ({ timeoutMs: 1_000, owner: { host: 'h"ost\\ü', pid: 42, requestId }, message });
  const own: OwnNodeData[] = [
    { guid: 'g-1', priority: 'background', acquiredAt: 1_700_000_000_123, entry: null },
    { guid: null, priority: null, acquiredAt: 0, entry: 'fg-0000000003' },
    { guid: 'quote"back\\slash\u0000😀', priority: 'foreground', acquiredAt: 5, entry: 'bg-"odd"' },
  ];

  // In the order the engine always wrote them.
  const whole = (fields: OwnNodeData, owner: LockRequest['owner'] | null, message: string): string =>
    encodeNodeData({ guid: fields.guid, owner, priority: fields.priority, acquiredAt: fields.acquiredAt, message, entry: fields.entry });

  it('encodes a request\'s lock nodes exactly as encodeNodeData does', () => {
    for (const req of [request('r-1', 'POST /_bulk'), request('r-2'), request('r-3', 'PUT /ünï/_doc/"x"\n')]) {
      for (const fields of own) {
        const expected = whole(fields, req.owner, req.message ?? '');
        expect(encodeRequestNodeData(req, fields)).toBe(expected);
        // twice: the second comes from the request's cached part
        expect(encodeRequestNodeData(req, fields)).toBe(expected);
      }
    }
  });

  it('gives every lock of one request and millisecond its own guid', () => {
    const req = request('r-bulk', 'POST /_bulk');
    for (const guid of ['g-1', 'g-2', 'g-3']) {
      const fields: OwnNodeData = { guid, priority: 'background', acquiredAt: 1_700_000_000_500, entry: null };
      expect(encodeRequestNodeData(req, fields)).toBe(whole(fields, req.owner, 'POST /_bulk'));
    }
  });

  it('encodes a lock node without a request as having no owner and no message', () => {
    const text = encodeRequestNodeData(null, own[0]!);
    expect(text).toBe(whole(own[0]!, null, ''));
    expect(parseNodeData(text)).toEqual({ guid: 'g-1', owner: null, priority: 'background', acquiredAt: 1_700_000_000_123, message: '', entry: null });
  });

  it('keeps each request\'s owner apart', () => {
    const first = parseNodeData(encodeRequestNodeData(request('r-a', 'one'), own[0]!));
    const second = parseNodeData(encodeRequestNodeData(request('r-b', 'two'), own[0]!));
    expect([first.owner?.requestId, first.message]).toEqual(['r-a', 'one']);
    expect([second.owner?.requestId, second.message]).toEqual(['r-b', 'two']);
  });
});
