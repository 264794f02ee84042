import type { IncomingHttpHeaders } from 'node:http';
import { errorResult, type JsonObject, type OperationResult } from './es-errors.js';

/**
 * Elasticsearch's security as the stand-in plays it (`EsStandInOptions.security`): every request
 * is authenticated before anything else runs — Basic (native users), ApiKey, Bearer tokens, or the
 * anonymous user when one is configured — and refused with Elasticsearch's 401 otherwise;
 * `GET /_security/_authenticate` says who a request is, `_has_privileges` answers from the roles'
 * index privileges, and a document write the roles do not grant is refused with its 403.
 *
 * Elasticsearch sources followed:
 * - x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authc/DefaultAuthenticationFailureHandler.java
 *   (401 with every realm's `WWW-Authenticate` challenge, as headers and in the error's `header` field);
 * - x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authc/AuthenticatorChain.java
 *   ("missing authentication credentials for REST request [uri]", "unable to authenticate user [u] for REST request [uri]");
 * - x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authc/Authentication.java (the `_authenticate` body);
 * - x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/rest/action/user/RestHasPrivilegesAction.java;
 * - x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authz/privilege/IndexPrivilege.java
 *   (`index`, `create`, `delete` and `write` grant document writes; `all` grants everything).
 */
export interface StandInSecurityOptions {
  /** Native users: name → password and roles. */
  readonly users?: Readonly<Record<string, { readonly password: string; readonly roles: readonly string[] }>>;
  /** API keys: id → secret, name and owner (the key has its owner's roles). */
  readonly apiKeys?: Readonly<Record<string, { readonly key: string; readonly name: string; readonly owner: string }>>;
  /** Bearer tokens: token → user name. */
  readonly tokens?: Readonly<Record<string, string>>;
  /** `xpack.security.authc.anonymous`: requests without credentials run as this user. */
  readonly anonymous?: { readonly username: string; readonly roles: readonly string[] };
  /** Roles' index privileges: role → index name patterns (`*` wildcards) and privileges. `superuser` has all. */
  readonly roles?: Readonly<Record<string, readonly { readonly names: readonly string[]; readonly privileges: readonly string[] }[]>>;
}

export interface StandInUser {
  readonly username: string;
  readonly roles: readonly string[];
  readonly realm: { readonly name: string; readonly type: string };
  readonly authenticationType: 'realm' | 'api_key' | 'token' | 'anonymous';
  readonly apiKey?: { readonly id: string; readonly name: string };
}

/** The challenges of the default realms plus the token and API key services, in Elasticsearch's order. */
export const WWW_AUTHENTICATE = ['Basic realm="security", charset="UTF-8"', 'Bearer realm="security"', 'ApiKey'] as const;

export type Authenticated = { readonly ok: true; readonly user: StandInUser } | { readonly ok: false; readonly refusal: OperationResult };

export class StandInSecurity {
  private readonly revokedKeys = new Set<string>();
  /** Authentications answered, successful or not (what a test counts to see a cache work). */
  authentications = 0;
  /** Writes (PUT, POST, DELETE outside `/_security`) refused for their credentials: writes that reached the cluster unauthenticated. */
  refusedWrites = 0;

  constructor(private readonly options: StandInSecurityOptions) {}

  /** Invalidates an API key: every later request with it is refused. */
  invalidateApiKey(id: string): void {
    this.revokedKeys.add(id);
  }

  authenticate(headers: IncomingHttpHeaders, uri: string, method = 'GET'): Authenticated {
    const authenticated = this.authenticateCredentials(headers, uri);
    if (!authenticated.ok && method !== 'GET' && method !== 'HEAD' && !uri.startsWith('/_security/')) this.refusedWrites += 1;
    return authenticated;
  }

  private authenticateCredentials(headers: IncomingHttpHeaders, uri: string): Authenticated {
    this.authentications += 1;
    const authorization = typeof headers.authorization === 'string' ? headers.authorization.trim() : '';
    if (authorization === '') {
      const anonymous = this.options.anonymous;
      if (anonymous !== undefined) return { ok: true, user: { ...anonymous, realm: { name: '__anonymous', type: '__anonymous' }, authenticationType: 'anonymous' } };
      return refused(`missing authentication credentials for REST request [${uri}]`);
    }
    const space = authorization.indexOf(' ');
    const scheme = (space < 0 ? authorization : authorization.slice(0, space)).toLowerCase();
    const value = space < 0 ? '' : authorization.slice(space + 1).trim();
    switch (scheme) {
      case 'basic':
        return this.basic(value, uri);
      case 'apikey':
        return this.apiKey(value);
      case 'bearer':
        return this.bearer(value);
      default:
        return refused(`missing authentication credentials for REST request [${uri}]`);
    }
  }

  /** `GET /_security/_authenticate`'s body. */
  authenticateBody(user: StandInUser): JsonObject {
    return {
      username: user.username,
      roles: [...user.roles],
      full_name: null,
      email: null,
      metadata: {},
      enabled: true,
      authentication_realm: user.realm,
      lookup_realm: user.realm,
      authentication_type: user.authenticationType,
      ...(user.apiKey !== undefined ? { api_key: user.apiKey } : {}),
    };
  }

  /**
   * Whether `user`'s roles grant `requested` on `index`: an action name (`indices:data/write/index`)
   * or an index privilege name, which is granted when the held privileges cover every action it
   * stands for — as Elasticsearch resolves both (IndexPrivilege.java).
   */
  grants(user: StandInUser, index: string, requested: string): boolean {
    if (user.roles.includes('superuser')) return true;
    const held = user.roles.flatMap((role) =>
      (this.options.roles?.[role] ?? []).filter((grant) => grant.names.some((pattern) => globMatch(pattern, index))).flatMap((grant) => grant.privileges.flatMap(actionPatternsOf)),
    );
    return actionPatternsOf(requested).every((wanted) => held.some((pattern) => covers(pattern, wanted)));
  }

  /** `_has_privileges` for index privileges. */
  hasPrivileges(user: StandInUser, body: Buffer): OperationResult {
    let request: { index?: { names?: string[] | string; privileges?: string[] }[] };
    try {
      request = JSON.parse(body.toString('utf8') || '{}') as typeof request;
    } catch {
      return errorResult(400, { type: 'parse_exception', reason: 'request body is required' });
    }
    const index: Record<string, Record<string, boolean>> = {};
    let all = true;
    for (const entry of request.index ?? []) {
      const names = typeof entry.names === 'string' ? [entry.names] : (entry.names ?? []);
      for (const name of names) {
        index[name] ??= {};
        for (const privilege of entry.privileges ?? []) {
          const granted = this.grants(user, name, privilege);
          index[name][privilege] = granted;
          all &&= granted;
        }
      }
    }
    return { status: 200, body: { username: user.username, has_all_requested: all, cluster: {}, index, application: {} } };
  }

  /** Elasticsearch's 403 for a document write action the roles do not grant. */
  unauthorized(user: StandInUser, action: string, index: string): OperationResult {
    const reason =
      `action [${action}] is unauthorized for ${user.apiKey !== undefined ? `API key id [${user.apiKey.id}] of user [${user.username}]` : `user [${user.username}]`}` +
      ` with effective roles [${[...user.roles].sort().join(',')}] on indices [${index}],` +
      ` this action is granted by the index privileges ${GRANTED_BY[action] ?? '[write,all]'}`;
    return errorResult(403, { type: 'security_exception', reason });
  }

  private basic(value: string, uri: string): Authenticated {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const username = colon < 0 ? decoded : decoded.slice(0, colon);
    const user = this.options.users?.[username];
    if (user === undefined || colon < 0 || user.password !== decoded.slice(colon + 1)) {
      return refused(`unable to authenticate user [${username}] for REST request [${uri}]`);
    }
    return { ok: true, user: { username, roles: user.roles, realm: { name: 'default_native', type: 'native' }, authenticationType: 'realm' } };
  }

  private apiKey(value: string): Authenticated {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const id = colon < 0 ? decoded : decoded.slice(0, colon);
    const key = this.options.apiKeys?.[id];
    if (key === undefined || colon < 0 || key.key !== decoded.slice(colon + 1)) return unsuccessful(`API key: unable to find apikey with id ${id}`);
    if (this.revokedKeys.has(id)) return unsuccessful(`API key: api key [${id}] has been invalidated`);
    const owner = this.options.users?.[key.owner];
    return {
      ok: true,
      user: {
        username: key.owner,
        roles: owner?.roles ?? [],
        realm: { name: '_es_api_key', type: '_es_api_key' },
        authenticationType: 'api_key',
        apiKey: { id, name: key.name },
      },
    };
  }

  private bearer(value: string): Authenticated {
    const username = this.options.tokens?.[value];
    const user = username === undefined ? undefined : this.options.users?.[username];
    // Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authc/OAuth2TokenAuthenticator.java
    // (an unknown token is unsuccessful with "invalid token", under the authenticator's name "oauth2 token").
    if (username === undefined || user === undefined) return unsuccessful('oauth2 token: invalid token');
    return { ok: true, user: { username, roles: user.roles, realm: { name: 'default_native', type: 'native' }, authenticationType: 'token' } };
  }
}

function refused(reason: string, extra: JsonObject = {}): Authenticated {
  return { ok: false, refusal: errorResult(401, { type: 'security_exception', reason, ...extra, header: { 'WWW-Authenticate': [...WWW_AUTHENTICATE] } }) };
}

/**
 * No authenticator took the credentials: the generic reason, each one's message as
 * `<authenticator name>: <message>`, and the default challenges (a token service's own Bearer
 * challenge is replaced by them too, only Negotiate is kept).
 * Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authc/AuthenticatorChain.java,
 * x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authc/DefaultAuthenticationFailureHandler.java
 */
function unsuccessful(credentials: string): Authenticated {
  return refused('unable to authenticate with provided credentials and anonymous access is not allowed for this request', {
    additional_unsuccessful_credentials: credentials,
  });
}

/**
 * The actions of the index privileges a write involves, as patterns (a trailing `*` only).
 * Elasticsearch: x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authz/privilege/IndexPrivilege.java
 * (CREATE_AUTOMATON, CREATE_DOC_AUTOMATON, INDEX_AUTOMATON, DELETE_AUTOMATON, WRITE_AUTOMATON, ALL_AUTOMATON).
 */
const PRIVILEGE_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  all: ['indices:*'],
  read: ['indices:data/read/*'],
  write: ['indices:data/write/*'],
  index: ['indices:data/write/index*', 'indices:data/write/bulk*', 'indices:data/write/update*'],
  create: ['indices:data/write/index*', 'indices:data/write/bulk*'],
  create_doc: ['indices:data/write/index', 'indices:data/write/index[*', 'indices:data/write/index:op_type/create', 'indices:data/write/bulk*'],
  delete: ['indices:data/write/delete*', 'indices:data/write/bulk*'],
};

/** The privileges that grant each document write action, least access first, as Elasticsearch names them in its 403. */
const GRANTED_BY: Readonly<Record<string, string>> = {
  'indices:data/write/index': '[create_doc,create,index,write,all]',
  'indices:data/write/index:op_type/index': '[create,index,write,all]',
  'indices:data/write/index:op_type/create': '[create_doc,create,index,write,all]',
  'indices:data/write/update': '[index,write,all]',
  'indices:data/write/delete': '[delete,write,all]',
};

/** An action name stands for itself; a privilege name for its actions; an unknown name for nothing. */
function actionPatternsOf(name: string): readonly string[] {
  if (name.includes(':')) return [name];
  return PRIVILEGE_ACTIONS[name] ?? ['\0unknown privilege'];
}

/** Whether held pattern `held` matches every action `wanted` (a name or a pattern) matches. */
function covers(held: string, wanted: string): boolean {
  if (!held.endsWith('*')) return held === wanted;
  const prefix = held.slice(0, -1);
  return wanted.startsWith(prefix);
}

function globMatch(pattern: string, name: string): boolean {
  const regex = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return regex.test(name);
}
