import { rawWithoutHopByHop } from '../elasticsearch/hop-by-hop-headers.js';
import type { UpstreamResponse } from '../elasticsearch/upstream-forwarder.js';
import { AUTHENTICATE_PATH } from './cluster-authentication.js';

const ASKED_PATH = `REST request [${AUTHENTICATE_PATH}]`;

/**
 * The cluster's 401 for the credential check, as the cluster would have answered the write
 * itself: the same status, headers (`WWW-Authenticate` included) and body, whose reason names
 * the write's URI instead of the check's — Elasticsearch words it "… for REST request [<uri>]".
 * Elasticsearch: x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authc/DefaultAuthenticationFailureHandler.java
 */
export function refusalFor(url: string, refused: UpstreamResponse): UpstreamResponse {
  const text = refused.body.toString('utf8');
  if (!text.includes(ASKED_PATH)) return refused;
  return { ...refused, body: Buffer.from(text.split(ASKED_PATH).join(namedPath(url))) };
}

/** A refusal ready to write: its head's headers (without framing), and its body naming the write's URI. */
export interface RefusalAnswer {
  readonly status: number;
  /** `[name, value, ...]`, hop-by-hop headers and `content-length` left out. */
  readonly headers: readonly string[];
  readonly body: string;
}

/** What of a cached refusal is the same for every write it answers, worked out once per refusal. */
interface RefusalTemplate {
  readonly status: number;
  readonly headers: readonly string[];
  /** The body's text around each mention of the check's URI. */
  readonly bodyParts: readonly string[];
}

const templates = new WeakMap<UpstreamResponse, RefusalTemplate>();

/**
 * `refusalFor`, as a write refused from its head needs it: the headers filtered and the body split
 * once per cached refusal (it answers every write with those credentials for the refusal's time
 * to live), so that each answer costs a join and no header or buffer building. The body is text:
 * written in one piece with the head.
 */
export function refusalAnswerFor(url: string, refused: UpstreamResponse): RefusalAnswer {
  let template = templates.get(refused);
  if (template === undefined) {
    template = {
      status: refused.status,
      headers: Object.freeze(rawWithoutHopByHop(refused.rawHeaders, ['content-length'])),
      bodyParts: Object.freeze(refused.body.toString('utf8').split(ASKED_PATH)),
    };
    templates.set(refused, template);
  }
  const body = template.bodyParts.length === 1 ? (template.bodyParts[0] ?? '') : template.bodyParts.join(namedPath(url));
  return { status: template.status, headers: template.headers, body };
}

/** Characters a JSON string cannot hold as they are (below the space: the control characters). */
const NEEDS_ESCAPING = /["\\\u2028\u2029]|[^ -\uffff]/;

/** The write's URI where the check's was, escaped for the JSON string it goes in. */
function namedPath(url: string): string {
  return `REST request [${NEEDS_ESCAPING.test(url) ? JSON.stringify(url).slice(1, -1) : url}]`;
}
