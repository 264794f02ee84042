import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEsStandIn, WWW_AUTHENTICATE, type EsStandIn } from '../../support/es-stand-in.js';
import { rawRequest } from '../../support/http-request.js';
import { apiKey, basic, SECURITY } from '../auth/security-fixture.js';

describe('the stand-in with security on answers as Elasticsearch 8 does', () => {
  let standIn: EsStandIn;
  beforeAll(async () => {
    standIn = await startEsStandIn({ security: SECURITY });
  });
  afterAll(async () => {
    await standIn?.stop();
  });

  it('refuses a request without credentials with 401, every realm’s challenge as its own header and in the error', async () => {
    const answer = await rawRequest(standIn.url, { path: '/idx/_doc/1', method: 'GET' });
    expect(answer.status).toBe(401);
    const challenges = answer.rawHeaders.filter((_, n) => n % 2 === 0 && answer.rawHeaders[n]?.toLowerCase() === 'www-authenticate').length;
    expect(challenges).toBe(WWW_AUTHENTICATE.length);
    const error = {
      type: 'security_exception',
      reason: 'missing authentication credentials for REST request [/idx/_doc/1]',
      header: { 'WWW-Authenticate': [...WWW_AUTHENTICATE] },
    };
    expect(JSON.parse(answer.body.toString())).toEqual({ error: { root_cause: [error], ...error }, status: 401 });
  });

  it('names the user of a wrong password, and says who an API key is', async () => {
    const wrong = await rawRequest(standIn.url, { path: '/_security/_authenticate', method: 'GET', headers: basic('alice', 'nope') });
    expect(JSON.parse(wrong.body.toString()).error.reason).toBe('unable to authenticate user [alice] for REST request [/_security/_authenticate]');
    const key = await rawRequest(standIn.url, { path: '/_security/_authenticate', method: 'GET', headers: apiKey('key-1', 'key-1-secret') });
    expect(JSON.parse(key.body.toString())).toMatchObject({ username: 'batch', roles: ['writer'], authentication_type: 'api_key', api_key: { id: 'key-1', name: 'ingest' } });
  });

  it('refuses an invalid Bearer token as Elasticsearch does: the generic reason, the token authenticator’s message, the default challenges', async () => {
    // Elasticsearch: OAuth2TokenAuthenticator.java (an unknown token is "invalid token", unsuccessful, not an exception),
    // AuthenticatorChain.java (es.additional_unsuccessful_credentials: "<authenticator name>: <message>"), and
    // DefaultAuthenticationFailureHandler.java (the default WWW-Authenticate challenges replace any other but Negotiate).
    const answer = await rawRequest(standIn.url, { path: '/_security/_authenticate', method: 'GET', headers: { authorization: 'Bearer not-a-token' } });
    expect(answer.status).toBe(401);
    const error = {
      type: 'security_exception',
      reason: 'unable to authenticate with provided credentials and anonymous access is not allowed for this request',
      additional_unsuccessful_credentials: 'oauth2 token: invalid token',
      header: { 'WWW-Authenticate': [...WWW_AUTHENTICATE] },
    };
    expect(JSON.parse(answer.body.toString())).toEqual({ error: { root_cause: [error], ...error }, status: 401 });
    const challenges = answer.rawHeaders.filter((_, n) => n % 2 === 1 && answer.rawHeaders[n - 1]?.toLowerCase() === 'www-authenticate');
    expect(challenges).toEqual([...WWW_AUTHENTICATE]);
  });

  it('answers _has_privileges from the roles, and refuses a write they do not grant with 403', async () => {
    const body = JSON.stringify({ index: [{ names: ['idx'], privileges: ['index', 'delete'] }] });
    const reader = await rawRequest(standIn.url, { path: '/_security/user/_has_privileges', method: 'POST', headers: { ...basic('reader', 'reader-secret'), 'content-type': 'application/json' }, body });
    expect(JSON.parse(reader.body.toString())).toMatchObject({ username: 'reader', has_all_requested: false, index: { idx: { index: false, delete: false } } });
    const write = await rawRequest(standIn.url, { path: '/idx/_doc/1', method: 'PUT', headers: { ...basic('reader', 'reader-secret'), 'content-type': 'application/json' }, body: '{}' });
    expect(write.status).toBe(403);
    expect(JSON.parse(write.body.toString()).error.type).toBe('security_exception');
    expect(standIn.document('idx', '1')).toBeUndefined();
  });
});
