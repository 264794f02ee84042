import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DocumentStore, storedId, type StoredDocument } from './es-stand-in/document-store.js';
import { GateSet, type Gate } from './es-stand-in/gates.js';
import { OverlapDetector, type OverlapReport, type PendingWrite } from './es-stand-in/overlap-detector.js';
import { decodeRequestBody } from './es-stand-in/request-decompression.js';
import { illegalArgument, type OperationResult } from './es-stand-in/es-errors.js';
import { planRoute, requestsCompatibleWith7, type WritePlan } from './es-stand-in/routes.js';
import { splitPath, type StandInRequest } from './es-stand-in/stand-in-request.js';
import { StandInSecurity, WWW_AUTHENTICATE, type StandInSecurityOptions, type StandInUser } from './es-stand-in/security.js';
import { WriteHistory, type AppliedOverlap, type AppliedWrite } from './es-stand-in/write-history.js';
import { writeStalledAnswer, writeWholeAnswer, type AnswerWriter } from './es-stand-in/stalled-answer.js';

export type { WriteAction } from './es-stand-in/document-write.js';
export type { Gate } from './es-stand-in/gates.js';
export type { OverlapExample, OverlapReport, PendingWrite } from './es-stand-in/overlap-detector.js';
export type { StandInRequest } from './es-stand-in/stand-in-request.js';
export type { StoredDocument } from './es-stand-in/document-store.js';
export { StandInSecurity, WWW_AUTHENTICATE, type StandInSecurityOptions } from './es-stand-in/security.js';
export type { AppliedOverlap, AppliedWrite, WriteRequestInfo } from './es-stand-in/write-history.js';

/**
 * An Elasticsearch stand-in for tests: the document APIs in Elasticsearch 8's shapes with its
 * optimistic concurrency control (`_seq_no`/`_primary_term`, `if_seq_no`, `version_type`,
 * op_type=create, 409 version_conflict_engine_exception), realtime GET and `_mget`, latency and
 * gates to widen or hold the window of a write, failure injection, a request log, and the
 * serialization oracle.
 *
 * The oracle: a write arrives (its body is in, past fault injection and custom handlers), waits
 * its latency and any gate, and is applied at the END of that delay, atomically (a bulk's items
 * in item order at one instant). Its application interval is [arrived, applied]; two writes to
 * one document whose intervals intersect overlap. A write whose client hung up is still applied,
 * as Elasticsearch applies it.
 */
export interface EsStandInOptions {
  /** Delay before each write is applied and answered (ms); widens the window an unserialized race needs. */
  readonly writeLatencyMs?: number;
  readonly readLatencyMs?: number;
  /** `version.number` of `GET /`. */
  readonly version?: string;
  /** `index.gc_deletes`: how long a delete tombstone keeps its version (default 60 s, as Elasticsearch). */
  readonly gcDeletesMs?: number;
  /**
   * Which cluster's routes it serves (default Elasticsearch 8): OpenSearch 1.x serves the typed
   * routes to every request, with no compatible-with header; OpenSearch 2.17 adds the streaming
   * bulk (`/_bulk/stream`), served here as a bulk whose items are applied together.
   */
  readonly distribution?: 'elasticsearch-8' | 'opensearch-1' | 'opensearch-2.17';
  /** Security on (es-stand-in/security.ts): every request authenticated first; absent, security is off. */
  readonly security?: StandInSecurityOptions;
}

export interface LoggedRequest {
  /** The stand-in's number for the request (1, 2, …), as `AppliedWrite.request.id` names it. */
  readonly id: number;
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  /** Filled in once the body has been received: inflated when it came compressed, as Elasticsearch reads it. */
  body: Buffer;
  /** The body as it came on the wire (compressed when `content-encoding` says so). */
  wireBody: Buffer;
  /** `performance.now()` when the request head arrived / the response finished (null until then). */
  readonly arrivedAt: number;
  finishedAt: number | null;
  status: number | null;
}

export type FaultKind =
  /** Body read, then the socket is destroyed before any response byte. */
  | 'reset-before-headers'
  /** Headers and part of a body sent, then the socket is destroyed. */
  | 'reset-mid-response'
  /** Never answers (the socket stays open until `stop`). */
  | 'hang'
  /** Handled as usual (a write is applied), then only the answer's head and half its body are sent; the socket stays open. */
  | 'stall-body-after-head';

export interface Fault {
  readonly kind: FaultKind;
  readonly match?: (request: StandInRequest) => boolean;
  /** How many matching requests it applies to (default 1; Infinity for all). */
  readonly times?: number;
}

/** Handles a request itself (resolve true) or leaves it to the Elasticsearch routes (false). */
export type CustomHandler = (request: StandInRequest, res: ServerResponse) => boolean | Promise<boolean>;

export interface EsStandIn {
  readonly url: string;
  readonly port: number;
  writeLatencyMs: number;
  readLatencyMs: number;
  readonly requests: readonly LoggedRequest[];
  /** Pairs of writes to one document with intersecting application intervals (counted as the later one arrives). */
  readonly overlaps: OverlapReport;
  /** Most writes ever in flight on one document at once (1 when serialized). */
  readonly maxConcurrentPerDocument: number;
  /** The security realm when security is on (`EsStandInOptions.security`), else null. */
  readonly security: StandInSecurity | null;
  /** Writes arrived and not applied yet, one per document they write. */
  readonly writesInFlight: number;
  /** Live document (index or alias name), or undefined (never written, or deleted). */
  document(index: string, id: string): StoredDocument | undefined;
  documents(index: string): ReadonlyMap<string, StoredDocument>;
  /**
   * Every write applied to the document (index or alias name), in application order, each with its
   * interval, request, body and outcome. Failed writes (409, 404 …) are in it: they reached the document.
   */
  history(index: string, id: string): readonly AppliedWrite[];
  /** Overlaps among applied writes, each with both writes (pairs from different requests). */
  appliedOverlaps(): readonly AppliedOverlap[];
  /** Writes that have arrived and are not applied yet. */
  pendingWrites(): readonly PendingWrite[];
  /** Resolves once an applied write (already recorded or future) satisfies `predicate`. */
  waitForApplied(predicate: (write: AppliedWrite) => boolean): Promise<AppliedWrite>;
  /** `indexRouting`: the alias's `index_routing`, which writes through it go with. */
  defineAlias(alias: string, writeIndex: string, otherIndices?: readonly string[], indexRouting?: string | null): void;
  /** Gives `index` several shards: a read with another routing than the write's then misses the document. */
  setShards(index: string, shards: number): void;
  /** An alias with no `is_write_index` flag (listed as `{}`): a read alias when it has several indices. */
  defineUnflaggedAlias(alias: string, indices: readonly string[]): void;
  /** Returns the backing index name. */
  defineDataStream(name: string): string;
  /** Holds matching requests after their latency until released: a held write is in flight, applied on release. */
  gate(match: (request: StandInRequest) => boolean): Gate;
  gateDocument(index: string, id: string): Gate;
  injectFault(fault: Fault): void;
  onRequest(handler: CustomHandler): () => void;
  /** Stops listening and cuts open connections: new connections are refused. */
  refuseConnections(): Promise<void>;
  /** Listens again on the same port. */
  acceptConnections(): Promise<void>;
  /** Resolves once a logged request satisfies `predicate` (checked on every arrival). */
  waitForRequest(predicate: (request: LoggedRequest) => boolean): Promise<LoggedRequest>;
  /** Clears the request log, the overlap counters and the histories (documents stay; writes in flight stay tracked). */
  resetLog(): void;
  /** Empties every index holding more than `limit` documents; returns how many documents went. */
  forgetDocumentsBeyond(limit: number): number;
  stop(): Promise<void>;
}

export async function startEsStandIn(options: EsStandInOptions = {}): Promise<EsStandIn> {
  const standIn = new StandInServer(options);
  await standIn.listen(0);
  return standIn;
}

class StandInServer implements EsStandIn {
  writeLatencyMs: number;
  readLatencyMs: number;
  readonly security: StandInSecurity | null;
  private readonly version: string;
  private readonly distribution: NonNullable<EsStandInOptions['distribution']>;
  private readonly store: DocumentStore;
  private readonly detector = new OverlapDetector();
  private readonly writeHistory = new WriteHistory();
  /** Orders arrivals and applications exactly (timestamps can tie). */
  private events = 0;
  private requestCount = 0;
  private readonly gates = new GateSet();
  private readonly faults: { fault: Fault; remaining: number }[] = [];
  private readonly handlers: CustomHandler[] = [];
  private readonly log: LoggedRequest[] = [];
  private readonly arrivalWaiters: { predicate: (request: LoggedRequest) => boolean; wake: (request: LoggedRequest) => void }[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private boundPort = 0;

  constructor(options: EsStandInOptions) {
    this.writeLatencyMs = options.writeLatencyMs ?? 0;
    this.readLatencyMs = options.readLatencyMs ?? 0;
    this.version = options.version ?? '8.15.0';
    this.distribution = options.distribution ?? 'elasticsearch-8';
    this.security = options.security === undefined ? null : new StandInSecurity(options.security);
    this.store = new DocumentStore({ gcDeletesMs: options.gcDeletesMs ?? 60_000 });
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', 'X-elastic-product': 'Elasticsearch' });
        res.end(JSON.stringify({ error: { type: 'stand_in_failure', reason: String(error) }, status: 500 }));
      });
    });
    // Long enough that the proxy's keep-alive sockets are never closed under it mid-test.
    this.server.keepAliveTimeout = 60_000;
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}`;
  }

  get port(): number {
    return this.boundPort;
  }

  get requests(): readonly LoggedRequest[] {
    return this.log;
  }

  get overlaps(): OverlapReport {
    return this.detector.report;
  }

  get maxConcurrentPerDocument(): number {
    return this.detector.maxConcurrentPerDocument;
  }

  get writesInFlight(): number {
    return this.detector.inFlightWrites;
  }

  async listen(port: number): Promise<void> {
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('stand-in has no TCP address');
    this.boundPort = address.port;
  }

  document(index: string, id: string): StoredDocument | undefined {
    return this.store.document(index, id);
  }

  documents(index: string): ReadonlyMap<string, StoredDocument> {
    return this.store.documents(index);
  }

  history(index: string, id: string): readonly AppliedWrite[] {
    return this.writeHistory.history(`${this.store.writeIndexOf(index)}/${storedId(id)}`);
  }

  appliedOverlaps(): readonly AppliedOverlap[] {
    return this.writeHistory.overlaps();
  }

  pendingWrites(): readonly PendingWrite[] {
    return this.detector.pending();
  }

  waitForApplied(predicate: (write: AppliedWrite) => boolean): Promise<AppliedWrite> {
    return this.writeHistory.waitFor(predicate);
  }

  defineAlias(alias: string, writeIndex: string, otherIndices: readonly string[] = [], indexRouting: string | null = null): void {
    this.store.defineAlias(alias, writeIndex, otherIndices, indexRouting);
  }

  setShards(index: string, shards: number): void {
    this.store.ensureIndex(index);
    this.store.placement.setShards(index, shards);
  }

  defineUnflaggedAlias(alias: string, indices: readonly string[]): void {
    this.store.defineUnflaggedAlias(alias, indices);
  }

  defineDataStream(name: string): string {
    return this.store.defineDataStream(name);
  }

  gate(match: (request: StandInRequest) => boolean): Gate {
    return this.gates.add(match);
  }

  gateDocument(index: string, id: string): Gate {
    const key = `${this.store.writeIndexOf(index)}/${id}`;
    return this.gates.add((request) => request.writeKeys.includes(key));
  }

  injectFault(fault: Fault): void {
    this.faults.push({ fault, remaining: fault.times ?? 1 });
  }

  onRequest(handler: CustomHandler): () => void {
    this.handlers.push(handler);
    return () => {
      const position = this.handlers.indexOf(handler);
      if (position >= 0) this.handlers.splice(position, 1);
    };
  }

  async refuseConnections(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  async acceptConnections(): Promise<void> {
    await this.listen(this.boundPort);
  }

  waitForRequest(predicate: (request: LoggedRequest) => boolean): Promise<LoggedRequest> {
    const found = this.log.find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((wake) => this.arrivalWaiters.push({ predicate, wake }));
  }

  resetLog(): void {
    this.log.length = 0;
    this.detector.reset();
    this.writeHistory.reset();
  }

  forgetDocumentsBeyond(limit: number): number {
    return this.store.forgetDocumentsBeyond(limit);
  }

  async stop(): Promise<void> {
    this.gates.releaseAll();
    const closed = this.server.listening ? new Promise<void>((resolve) => this.server.close(() => resolve())) : Promise.resolve();
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requestCount += 1;
    const entry: LoggedRequest = {
      id: this.requestCount,
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body: Buffer.alloc(0),
      wireBody: Buffer.alloc(0),
      arrivedAt: performance.now(),
      finishedAt: null,
      status: null,
    };
    this.log.push(entry);
    res.once('finish', () => {
      entry.finishedAt = performance.now();
      entry.status = res.statusCode;
    });
    entry.wireBody = await readBody(req);
    const decoded = decodeRequestBody(req.headers, entry.wireBody);
    entry.body = decoded.ok ? decoded.body : entry.wireBody;
    this.notifyArrival(entry);
    if (!decoded.ok) {
      const refused = illegalArgument(decoded.reason);
      sendJson(res, req, refused.status, refused.body);
      return;
    }

    const { segments, query } = splitPath(entry.url);
    const plan = planRoute(this.store, {
      method: entry.method,
      segments,
      query,
      body: entry.body,
      version: this.version,
      compatibleWith7: this.distribution === 'opensearch-1' || requestsCompatibleWith7(entry.headers, entry.body.length > 0),
      streamingBulk: this.distribution === 'opensearch-2.17',
    });
    const request: StandInRequest = { method: entry.method, url: entry.url, segments, query, headers: req.headers, body: entry.body, writeKeys: plan.writeKeys };

    const fault = this.takeFault(request);
    if (fault !== null && fault !== 'stall-body-after-head') {
      applyFault(fault, req, res);
      return;
    }
    const answer = fault === 'stall-body-after-head' ? writeStalledAnswer : writeWholeAnswer;
    for (const handler of [...this.handlers]) {
      if (await handler(request, res)) return;
    }

    // Past fault injection and custom handlers, as the test hooks see every request first.
    let user: StandInUser | null = null;
    if (this.security !== null) {
      const authenticated = this.security.authenticate(req.headers, entry.url, entry.method);
      if (!authenticated.ok) {
        sendJson(res, req, 401, authenticated.refusal.body, { 'WWW-Authenticate': [...WWW_AUTHENTICATE] });
        return;
      }
      user = authenticated.user;
      if (segments[0] === '_security') {
        const answer = securityRoute(this.security, user, entry.method, segments, entry.body);
        sendJson(res, req, answer.status, answer.body);
        return;
      }
    }
    const refusal = user === null || this.security === null ? null : unauthorizedWrite(this.security, user, entry.method, segments);
    if (refusal !== null) {
      sendJson(res, req, refusal.status, refusal.body);
      return;
    }
    if (plan.kind === 'write') {
      await this.write(entry, request, plan, res, req, answer);
      return;
    }
    if (this.readLatencyMs > 0) await sleep(this.readLatencyMs);
    await this.gates.pass(request);
    const result = plan.execute();
    sendJson(res, req, result.status, result.body, {}, answer);
  }

  /** In flight from arrival until applied at the end of its delay; answered after. */
  private async write(entry: LoggedRequest, request: StandInRequest, plan: WritePlan, res: ServerResponse, req: IncomingMessage, answer: AnswerWriter): Promise<void> {
    const opaqueId = req.headers['x-opaque-id'];
    const info = { id: entry.id, method: entry.method, url: entry.url, opaqueId: typeof opaqueId === 'string' ? opaqueId : null };
    const arrivedAt = performance.now();
    const arrivedTick = this.nextEvent();
    const endInFlight = this.detector.begin(plan.writeKeys, { id: entry.id, label: `${entry.method} ${entry.url}` }, arrivedAt);
    let response;
    try {
      if (this.writeLatencyMs > 0) await sleep(this.writeLatencyMs);
      await this.gates.pass(request);
      // Applied, recorded and taken out of flight in one synchronous step: nothing interleaves.
      const applied = plan.apply();
      this.writeHistory.record({ request: info, arrivedAt, arrivedTick, appliedAt: performance.now(), appliedTick: this.nextEvent(), writes: applied.writes });
      response = applied.response;
    } finally {
      endInFlight();
    }
    sendJson(res, req, response.status, response.body, {}, answer);
  }

  private nextEvent(): number {
    this.events += 1;
    return this.events;
  }

  private notifyArrival(entry: LoggedRequest): void {
    for (const waiter of this.arrivalWaiters.filter((w) => w.predicate(entry))) {
      this.arrivalWaiters.splice(this.arrivalWaiters.indexOf(waiter), 1);
      waiter.wake(entry);
    }
  }

  private takeFault(request: StandInRequest): FaultKind | null {
    for (const pending of this.faults) {
      if (pending.remaining <= 0 || (pending.fault.match !== undefined && !pending.fault.match(request))) continue;
      pending.remaining -= 1;
      return pending.fault.kind;
    }
    return null;
  }
}

function applyFault(kind: Exclude<FaultKind, 'stall-body-after-head'>, req: IncomingMessage, res: ServerResponse): void {
  if (kind === 'hang') return;
  if (kind === 'reset-before-headers') {
    req.socket.destroy();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'X-elastic-product': 'Elasticsearch', 'content-length': '100000' });
  res.write('{"took":1,"partial":"', () => req.socket.destroy());
}

/** Vendor media type in, vendor media type out, as Elasticsearch 8 answers the official client. */
function contentTypeFor(req: IncomingMessage): string {
  const accept = String(req.headers.accept ?? '');
  const compatible = /application\/vnd\.elasticsearch\+json;\s*compatible-with=(\d+)/.exec(accept);
  return compatible === null ? 'application/json' : `application/vnd.elasticsearch+json;compatible-with=${compatible[1]}`;
}

function sendJson(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
  answer: AnswerWriter = writeWholeAnswer,
): void {
  answer(res, req, status, Buffer.from(JSON.stringify(body)), { 'content-type': contentTypeFor(req), 'X-elastic-product': 'Elasticsearch', ...headers });
}

/** `_security/_authenticate` and `_security/user/_has_privileges`; other security APIs are not played. */
function securityRoute(security: StandInSecurity, user: StandInUser, method: string, segments: readonly string[], body: Buffer): OperationResult {
  if (segments[1] === '_authenticate' && segments.length === 2 && method === 'GET') return { status: 200, body: security.authenticateBody(user) };
  if (segments[1] === 'user' && segments.at(-1) === '_has_privileges' && (method === 'GET' || method === 'POST')) return security.hasPrivileges(user, body);
  return illegalArgument(`no handler found for uri [/${segments.join('/')}] and method [${method}]`);
}

/**
 * A single-document write the user's roles do not grant, refused before it runs (bulk items are
 * authorized per item by Elasticsearch and are not played here).
 * Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authz/AuthorizationService.java
 */
function unauthorizedWrite(security: StandInSecurity, user: StandInUser, method: string, segments: readonly string[]): OperationResult | null {
  const [index, endpoint] = segments;
  if (index === undefined || index.startsWith('_') || endpoint === undefined || segments.length !== 3) return null;
  if (method !== 'PUT' && method !== 'POST' && method !== 'DELETE') return null;
  const actions = writeActions(method, endpoint);
  const refused = actions.find((action) => !security.grants(user, index, action));
  return refused === undefined ? null : security.unauthorized(user, refused, index);
}

/**
 * The actions a single-document write is authorized as: its transport action, then its item's
 * (a single write runs as a one-item bulk, each item authorized by op type).
 * Elasticsearch: server/src/main/java/org/elasticsearch/action/index/TransportIndexAction.java (indices:data/write/index),
 * x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authz/AuthorizationService.java (IMPLIED_INDEX_ACTION, IMPLIED_CREATE_ACTION).
 */
function writeActions(method: string, endpoint: string): readonly string[] {
  if (method === 'DELETE') return ['indices:data/write/delete'];
  if (endpoint === '_create') return ['indices:data/write/index', 'indices:data/write/index:op_type/create'];
  if (endpoint === '_update') return ['indices:data/write/update'];
  if (endpoint === '_doc') return ['indices:data/write/index', 'indices:data/write/index:op_type/index'];
  return [];
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}
