import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import type { UpstreamForwarder } from '../elasticsearch/upstream-forwarder.js';
import type { WriteOutcome } from '../write/write-outcome.js';
import { createWritePath, type WritePath } from '../write/write-path.js';
import type { WritePathDeps } from '../write/write-path-deps.js';
import { admittedWritePath, type WritePrincipals } from '../auth/admitted-write-path.js';
import type { WriteAdmission } from '../auth/write-admission.js';
import { addToAnswerHead } from './answer-headers.js';
import { sendElasticsearchError } from './elasticsearch-error.js';
import { answerFailedWrite, writeAnswerHeaders } from './failed-write.js';
import { readableBody } from './readable-body.js';
import { relayUpstreamResponse, sendJson } from './relay-response.js';
import { presentedUpstreamError } from './response-options/present.js';
import { lenientResponseOptionsOf, responseOptionsOf } from './response-options/response-options.js';
import type { InterceptedRequest, RefusalBeforeBody, WriteInterceptor } from './write-interceptor.js';

/** What the edge needs besides the write path: the body limit and fencing mode, the log, the upstream. */
export interface WriteEdgeDeps {
  readonly settings: () => Settings;
  readonly logger: Logger;
  readonly forwarder: UpstreamForwarder;
}

/** Checks of a write before its locks (src/auth), with who each write is told to the metrics. */
export interface WriteGate {
  readonly admission: WriteAdmission;
  readonly principals: WritePrincipals;
  readonly knownRefusal?: RefusalBeforeBody;
}

/** The write path behind the proxy port, its outcomes written to the client here. */
export function createWriteInterceptor(deps: WritePathDeps, gate?: WriteGate): WriteInterceptor {
  const writePath: WritePath = createWritePath(deps);
  if (gate === undefined) return writeInterceptorOf(writePath, deps);
  const intercept = writeInterceptorOf(admittedWritePath(writePath, gate.admission, (request: InterceptedRequest, headers) => addToAnswerHead(request.res, headers), gate.principals), deps);
  return gate.knownRefusal === undefined ? intercept : Object.assign(intercept, { refusalBeforeBody: gate.knownRefusal });
}

export function writeInterceptorOf(writePath: (request: InterceptedRequest) => Promise<WriteOutcome>, deps: WriteEdgeDeps): WriteInterceptor {
  return async (received) => {
    try {
      // Refused before any lock is taken: the proxy may compose the answer, and Elasticsearch refuses these too.
      responseOptionsOf(received.req.url ?? '/');
      const exchange = await readableBody(received, deps.settings(), deps.logger);
      await renderOutcome(deps.forwarder, exchange.res, await writePath(exchange), received.requestId);
    } catch (error) {
      answerFailedWrite(deps.logger, received.res, error, received.requestId);
    }
  };
}

/** Writes `outcome` to the client; a forward resolves once its answer has streamed through. */
async function renderOutcome(forwarder: UpstreamForwarder, res: ServerResponse, outcome: WriteOutcome, requestId: string): Promise<void> {
  switch (outcome.kind) {
    case 'upstream':
      return relayUpstreamResponse(res, outcome.upstream);
    case 'upstream_refusal':
      return relayUpstreamResponse(res, presentedUpstreamError(outcome.upstream, lenientResponseOptionsOf(res.req?.url)));
    case 'composed':
      return sendJson(res, outcome.status, outcome.body, writeAnswerHeaders(requestId, outcome.notes));
    case 'error':
      if (res.destroyed) return;
      return sendElasticsearchError(res, outcome.error, writeAnswerHeaders(requestId, outcome.notes));
    case 'forward':
      await forwarder.pipe(outcome.request, res);
      return;
    case 'done':
      return;
  }
}
