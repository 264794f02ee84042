import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ForwardOutcome, ForwardRequest, UpstreamForwarder } from '../elasticsearch/upstream-forwarder.js';
import type { WriteRoute } from '../write/write-request.js';
import type { ClientGone } from './client-gone.js';
import type { InflatedFrom, InterceptedRequest } from './write-interceptor.js';

const DELIVERED: Promise<void> = Promise.resolve();

/**
 * A client write as the proxy port hands it to the write path. A class rather than an object
 * literal with a closure: `streamAnswer` is a method, so a write costs no extra allocation for it.
 */
export class ClientWrite implements InterceptedRequest {
  readonly inflatedFrom: InflatedFrom | null = null;
  private delivery: Promise<void> = DELIVERED;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly route: WriteRoute,
    readonly body: Buffer,
    readonly bodyStreams: boolean,
    readonly requestId: string,
    readonly clientGone: ClientGone,
    private readonly forwarder: UpstreamForwarder,
  ) {}

  /** Resolves when Elasticsearch is done with the request; the client may still be reading (`delivered`). */
  streamAnswer(request: ForwardRequest): Promise<ForwardOutcome> {
    const forward = this.forwarder.spool(request, this.res);
    this.delivery = forward.delivered;
    return forward.outcome;
  }

  /** Resolves once an answer streamed by `streamAnswer` has reached the client or its connection is closed. */
  delivered(): Promise<void> {
    return this.delivery;
  }
}
