import { contentCodingOf } from '../http/body/content-coding.js';
import { inflateBody } from '../http/body/inflate-body.js';
import type { InterceptedRequest as ClientExchange, WriteRoute } from '../http/write-interceptor.js';
import type { Settings } from '../config/settings.js';

/**
 * The exchange with a body the write path can read: a compressed body is inflated (bounded by
 * `proxy.max.body.bytes`) when the write path parses it — every bulk, and single writes when
 * fencing reads their body. Other bodies stay as the client sent them, compressed or not, and go
 * upstream untouched. Runs before any lock is taken: a body that cannot be read (an unsupported
 * coding, a corrupt stream, an expansion past the limit) is refused with nothing locked or sent.
 */
export async function withReadableBody(exchange: ClientExchange, settings: Settings): Promise<ClientExchange> {
  if (!readsContent(exchange.route, settings)) return exchange;
  const coding = contentCodingOf(exchange.req.headers['content-encoding']);
  if (coding === null) return exchange;
  const body = await inflateBody(exchange.body, coding, settings.proxy.maxBodyBytes);
  return { ...exchange, body, inflatedFrom: { coding, bytes: exchange.body } };
}

function readsContent(route: WriteRoute, settings: Settings): boolean {
  return route.kind === 'bulk' || (route.kind === 'single' && settings.proxy.fencing === 'on');
}
