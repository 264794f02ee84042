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
  const named = `REST request [${JSON.stringify(url).slice(1, -1)}]`;
  return { ...refused, body: Buffer.from(text.split(ASKED_PATH).join(named)) };
}
