import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ForwardOutcome, ForwardRequest, UpstreamForwarder } from '../forwarding/upstream-forwarder.js';
import type { WriteRoute } from '../write/write-request.js';
import type { ClientGone } from './client-gone.js';
import type { InflatedFrom, InterceptedRequest } from './write-interceptor.js';

/**
 * A client write as the proxy port hands it to the write path. A class rather than an object
 * literal with a closure: `streamAnswer` is a method, so a write costs no extra allocation for it.
 */
export class ClientWrite implements InterceptedRequest {
  readonly inflatedFrom: InflatedFrom | null = null;

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

  streamAnswer(request: ForwardRequest): Promise<ForwardOutcome> {
    return this.forwarder.pipe(request, this.res);
  }
}
