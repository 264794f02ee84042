import type { LockOwner, LockRequest, Priority } from './lock-engine.js';

/**
 * What the engine writes into queue entries and `privateLock`. The `guid` identifies one
 * acquisition attempt so a node whose create reply was lost can be found again; foreign nodes
 * (e.g. written by a client following the original document) parse to `null` fields.
 */
export interface LockNodeData {
  readonly guid: string | null;
  readonly owner: LockOwner | null;
  readonly priority: Priority | null;
  readonly acquiredAt: number | null;
  readonly message: string;
  /** For `privateLock`: the holder's queue entry name, null on the fast path. */
  readonly entry: string | null;
}

export function encodeNodeData(data: LockNodeData): string {
  return JSON.stringify(data);
}

/** What one lock node says of its own: the rest comes from the request it is taken for. */
export interface OwnNodeData {
  readonly guid: string | null;
  readonly priority: Priority | null;
  readonly acquiredAt: number;
  readonly entry: string | null;
}

/** A request's owner and message as JSON, the two pieces of node data every lock it takes repeats. */
interface EncodedRequest {
  readonly owner: string;
  readonly message: string;
  /** The text after the guid and owner, as last encoded: a bulk's keys share it (same priority, millisecond and entry). */
  tail: EncodedTail | null;
}

interface EncodedTail {
  readonly priority: Priority | null;
  readonly acquiredAt: number;
  readonly entry: string | null;
  readonly text: string;
}

const NO_REQUEST: EncodedRequest = { owner: 'null', message: '""', tail: null };
const encodedRequests = new WeakMap<LockRequest, EncodedRequest>();

/**
 * The same text as `encodeNodeData` (same keys, same order), with the request's part encoded once
 * per request: a bulk's privateLocks all carry one owner and message, and encoding them again for
 * each of its documents was a measurable share of the proxy's CPU per bulk document.
 */
export function encodeRequestNodeData(request: LockRequest | null, own: OwnNodeData): string {
  const shared = request === null ? NO_REQUEST : encodedOnce(request);
  return `{"guid":${JSON.stringify(own.guid)},"owner":${shared.owner},${tailOf(shared, own)}`;
}

function tailOf(shared: EncodedRequest, own: OwnNodeData): string {
  const last = shared.tail;
  if (last !== null && last.acquiredAt === own.acquiredAt && last.priority === own.priority && last.entry === own.entry) return last.text;
  const json = JSON.stringify;
  const text = `"priority":${json(own.priority)},"acquiredAt":${json(own.acquiredAt)},"message":${shared.message},"entry":${json(own.entry)}}`;
  shared.tail = { priority: own.priority, acquiredAt: own.acquiredAt, entry: own.entry, text };
  return text;
}

function encodedOnce(request: LockRequest): EncodedRequest {
  let encoded = encodedRequests.get(request);
  if (encoded === undefined) {
    encoded = { owner: JSON.stringify(request.owner), message: JSON.stringify(request.message ?? ''), tail: null };
    encodedRequests.set(request, encoded);
  }
  return encoded;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseOwner(value: unknown): LockOwner | null {
  if (!isRecord(value)) return null;
  const { host, pid, requestId } = value;
  if (typeof host !== 'string' || typeof pid !== 'number' || typeof requestId !== 'string') return null;
  return { host, pid, requestId };
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function parseNodeData(raw: string | Buffer | null | undefined): LockNodeData {
  const empty: LockNodeData = { guid: null, owner: null, priority: null, acquiredAt: null, message: '', entry: null };
  if (raw === null || raw === undefined) return empty;
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ...empty, message: text };
  }
  if (!isRecord(parsed)) return empty;
  const priority = parsed.priority === 'foreground' || parsed.priority === 'background' ? parsed.priority : null;
  return {
    guid: stringOrNull(parsed.guid),
    owner: parseOwner(parsed.owner),
    priority,
    acquiredAt: typeof parsed.acquiredAt === 'number' ? parsed.acquiredAt : null,
    message: stringOrNull(parsed.message) ?? '',
    entry: stringOrNull(parsed.entry),
  };
}
