import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import { ProxyError } from '../errors/proxy-error.js';
import type { WriteRoute } from '../write/write-request.js';
import { contentCodingOf } from './body/content-coding.js';
import { inflateBody } from './body/inflate-body.js';
import type { InterceptedRequest as ClientExchange } from './write-interceptor.js';

/**
 * The exchange with a body the write path can read: a compressed body is inflated (bounded by
 * `proxy.max.body.bytes`) when the write path parses it — every bulk, and single writes when
 * fencing reads their body. Other bodies stay as the client sent them, compressed or not, and go
 * upstream untouched. Runs before any lock is taken: a body that cannot be read (an unsupported
 * coding, a corrupt stream, an expansion past the limit) is refused with nothing locked or sent.
 */
export async function readableBody(exchange: ClientExchange, settings: Settings, logger: Logger): Promise<ClientExchange> {
  if (!readsContent(exchange.route, settings)) return exchange;
  try {
    const coding = contentCodingOf(exchange.req.headers['content-encoding']);
    if (coding === null) return exchange;
    const body = await inflateBody(exchange.body, coding, settings.proxy.maxBodyBytes);
    // A copy for this rare path: the exchange's own `streamAnswer` may be a method of its class.
    return { ...exchange, body, inflatedFrom: { coding, bytes: exchange.body }, streamAnswer: (request) => exchange.streamAnswer(request) };
  } catch (error) {
    // As the edge logs the bodies it refuses: a zip bomb or a shipper misconfigured shows up here.
    if (error instanceof ProxyError) logger.info({ requestId: exchange.requestId, code: error.code, reason: error.message, ...error.meta }, 'request body rejected');
    throw error;
  }
}

function readsContent(route: WriteRoute, settings: Settings): boolean {
  return route.kind === 'bulk' || (route.kind === 'single' && settings.proxy.fencing === 'on');
}
