import type { UpstreamForwarder, UpstreamResponse } from '../../elasticsearch/upstream-forwarder.js';
import { ProxyError } from '../../errors/proxy-error.js';
import { MISSING, type DocumentState } from './fence.js';
import { fencingReadFailed } from './fencing-errors.js';

/** A document to read: the index a GET must name (an alias's write index), its id and routing. */
export interface ReadTarget {
  readonly index: string;
  readonly id: string;
  readonly routing: string | null;
}

/**
 * Reads documents' `_seq_no`/`_primary_term` with realtime reads through the proxy's upstream
 * pool: `GET /{index}/_doc/{id}` for one, one `_mget` for several. They carry the proxy's own
 * cluster credentials (`elasticsearch.auth.*`) when configured, else the client's `Authorization`
 * (the reading user needs `read` on the written indices). Any failure rejects with
 * FENCING_READ_FAILED: the caller then forwards nothing.
 */
export class FenceReader {
  constructor(
    private readonly forwarder: UpstreamForwarder,
    private readonly proxyAuthorization: string | null,
  ) {}

  async readOne(target: ReadTarget, clientAuthorization: string | undefined): Promise<DocumentState> {
    const routing = target.routing === null ? '' : `&routing=${encodeURIComponent(target.routing)}`;
    const url = `/${encodeURIComponent(target.index)}/_doc/${encodeURIComponent(target.id)}?realtime=true&_source=false${routing}`;
    const what = `[${target.index}][${target.id}]`;
    const answer = await this.send('GET', url, null, clientAuthorization, what);
    return stateOfGet(parsed(answer, what), answer.status, what);
  }

  async readMany(targets: readonly ReadTarget[], clientAuthorization: string | undefined): Promise<DocumentState[]> {
    const docs = targets.map((target) => ({ _index: target.index, _id: target.id, _source: false, ...(target.routing === null ? {} : { routing: target.routing }) }));
    const what = `${targets.length} documents`;
    const answer = await this.send('POST', '/_mget?realtime=true', Buffer.from(JSON.stringify({ docs })), clientAuthorization, what);
    const body = parsed(answer, what);
    if (answer.status !== 200 || !Array.isArray(body.docs) || body.docs.length !== targets.length) throw failed(answer, body, what);
    return body.docs.map((doc: unknown, n) => stateOfMgetDoc(doc, `[${targets[n]?.index}][${targets[n]?.id}]`));
  }

  private async send(method: string, url: string, body: Buffer | null, clientAuthorization: string | undefined, what: string): Promise<UpstreamResponse> {
    const rawHeaders = ['Accept', 'application/json', ...(body === null ? [] : ['Content-Type', 'application/json'])];
    const authorization = this.proxyAuthorization ?? clientAuthorization;
    if (authorization !== undefined) rawHeaders.push('Authorization', authorization);
    try {
      return await this.forwarder.exchange({ method, url, rawHeaders, body: body ?? Buffer.alloc(0) });
    } catch (error) {
      if (!(error instanceof ProxyError)) throw error;
      throw fencingReadFailed(what, error.message, error);
    }
  }
}

type JsonRecord = Record<string, unknown>;

function stateOfGet(body: JsonRecord, status: number, what: string): DocumentState {
  if (status === 200 && body.found === true) return foundState(body, what);
  if (status === 404 && (body.found === false || errorType(body) === 'index_not_found_exception')) return MISSING;
  throw fencingReadFailed(what, `Elasticsearch answered ${status}${reasonOf(body)}`);
}

/** One `_mget` entry: found, not found, or its own error (a missing index means a missing document). */
function stateOfMgetDoc(doc: unknown, what: string): DocumentState {
  if (!isRecord(doc)) throw fencingReadFailed(what, 'malformed _mget entry');
  if (doc.found === true) return foundState(doc, what);
  if (doc.found === false || errorType(doc) === 'index_not_found_exception') return MISSING;
  throw fencingReadFailed(what, `_mget entry failed${reasonOf(doc)}`);
}

function foundState(doc: JsonRecord, what: string): DocumentState {
  const { _seq_no: seqNo, _primary_term: primaryTerm } = doc;
  if (typeof seqNo !== 'number' || typeof primaryTerm !== 'number') throw fencingReadFailed(what, 'the answer has no _seq_no/_primary_term');
  return { found: true, seqNo, primaryTerm };
}

function parsed(answer: UpstreamResponse, what: string): JsonRecord {
  try {
    const body: unknown = JSON.parse(answer.body.toString('utf8'));
    if (isRecord(body)) return body;
  } catch {
    // reported below with the status
  }
  throw fencingReadFailed(what, `Elasticsearch answered ${answer.status} with a body that is not a JSON object`);
}

function failed(answer: UpstreamResponse, body: JsonRecord, what: string): ProxyError {
  return fencingReadFailed(what, `Elasticsearch answered ${answer.status}${reasonOf(body)}`);
}

function errorType(body: JsonRecord): string | null {
  const { error } = body;
  return isRecord(error) && typeof error.type === 'string' ? error.type : null;
}

function reasonOf(body: JsonRecord): string {
  const { error } = body;
  if (!isRecord(error)) return '';
  return `: ${String(error.type)}${typeof error.reason === 'string' ? ` ${error.reason}` : ''}`;
}

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
