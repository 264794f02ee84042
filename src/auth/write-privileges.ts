import { LRUCache } from 'lru-cache';
import { ProxyError } from '../errors/proxy-error.js';
import type { UpstreamForwarder } from '../elasticsearch/upstream-forwarder.js';
import type { BulkAction } from '../classify/bulk-action-line.js';
import type { WriteRoute } from '../write/write-request.js';
import type { Principal } from './principal.js';

/** The index privilege a single-document write needs and the action Elasticsearch names in its 403. */
export interface RequiredPrivilege {
  readonly index: string;
  readonly privilege: 'index' | 'create' | 'delete';
  readonly action: string;
}

/**
 * What a single-document write needs, as Elasticsearch authorizes it: `index` for index and
 * update, `create` for create, `delete` for delete (`write` and `all` imply each).
 * Elasticsearch: x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authz/privilege/IndexPrivilege.java
 * A bulk is not checked as a whole: Elasticsearch authorizes its items one by one and answers
 * those it refuses inside a 200, so refusing the whole bulk here would change the answer.
 */
export function requiredPrivilege(route: WriteRoute): RequiredPrivilege | null {
  if (route.kind !== 'single') return null;
  switch (route.op) {
    case 'index':
      return { index: route.index, privilege: 'index', action: 'indices:data/write/index' };
    case 'create':
      return { index: route.index, privilege: 'create', action: 'indices:data/write/index' };
    case 'update':
      return { index: route.index, privilege: 'index', action: 'indices:data/write/update' };
    case 'delete':
      return { index: route.index, privilege: 'delete', action: 'indices:data/write/delete' };
  }
}

/**
 * What a bulk item needs, with the action Elasticsearch authorizes it as (per item, on the index
 * the item resolves to): `index`, `create`, `index` for an update, `delete`.
 * Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authz/AuthorizationService.java (getAction of a BulkItemRequest)
 */
export function bulkItemPrivilege(index: string, action: BulkAction): RequiredPrivilege {
  switch (action) {
    case 'index':
      return { index, privilege: 'index', action: 'indices:data/write/index:op_type/index' };
    case 'create':
      return { index, privilege: 'create', action: 'indices:data/write/index:op_type/create' };
    case 'update':
      return { index, privilege: 'index', action: 'indices:data/write/update' };
    case 'delete':
      return { index, privilege: 'delete', action: 'indices:data/write/delete' };
  }
}

/** Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/rest/action/user/RestHasPrivilegesAction.java */
export const HAS_PRIVILEGES_PATH = '/_security/user/_has_privileges';

/**
 * The cluster's answer to "may these credentials do this on this index", asked with
 * `_has_privileges` and kept per credential (its keyed hash), index and privilege for the
 * verdict cache's time to live.
 */
export class PrivilegeCheck {
  private readonly granted: LRUCache<string, boolean>;
  private readonly asking = new Map<string, Promise<boolean>>();

  constructor(
    private readonly forwarder: UpstreamForwarder,
    size: number,
    private readonly ttlMs: () => number,
  ) {
    this.granted = new LRUCache({ max: size, ttl: 1 });
  }

  async grants(credentialKey: string, credentials: readonly string[], needed: RequiredPrivilege): Promise<boolean> {
    const key = `${credentialKey}\0${needed.index}\0${needed.privilege}`;
    const known = this.granted.get(key);
    if (known !== undefined) return known;
    const pending = this.asking.get(key) ?? this.ask(key, credentials, needed);
    return pending;
  }

  private ask(key: string, credentials: readonly string[], needed: RequiredPrivilege): Promise<boolean> {
    const question = this.hasPrivilege(credentials, needed)
      .then((granted) => {
        const ttl = this.ttlMs();
        if (ttl > 0) this.granted.set(key, granted, { ttl });
        return granted;
      })
      .finally(() => this.asking.delete(key));
    this.asking.set(key, question);
    return question;
  }

  private async hasPrivilege(credentials: readonly string[], needed: RequiredPrivilege): Promise<boolean> {
    const [authorization, runAs] = credentials;
    const rawHeaders = ['content-type', 'application/json'];
    if (authorization !== undefined && authorization !== '') rawHeaders.push('authorization', authorization);
    if (runAs !== undefined && runAs !== '') rawHeaders.push('es-security-runas-user', runAs);
    const body = Buffer.from(JSON.stringify({ index: [{ names: [needed.index], privileges: [needed.privilege] }] }));
    const answer = await this.forwarder.exchange({ method: 'POST', url: HAS_PRIVILEGES_PATH, rawHeaders, body });
    if (answer.status !== 200) {
      throw new ProxyError('UPSTREAM_UNREACHABLE', `the cluster answered the privilege check with status ${answer.status}`);
    }
    const parsed = JSON.parse(answer.body.toString('utf8')) as { has_all_requested?: unknown };
    return parsed.has_all_requested === true;
  }
}

/**
 * Elasticsearch's refusal of an unauthorized write, worded as its authorization service does.
 * Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authz/AuthorizationDenialMessages.java
 */
export function unauthorizedWrite(principal: Principal, needed: RequiredPrivilege): ProxyError {
  return new ProxyError('WRITE_UNAUTHORIZED', unauthorizedReason(principal, needed, '[create_doc,create,index,write,all]'));
}

/**
 * The privileges that grant each bulk item action, in the order Elasticsearch names them (least
 * access first). Elasticsearch: x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authz/privilege/IndexPrivilege.java
 * (`create` still grants `indices:data/write/index*`, `index` grants updates, `delete` deletes).
 */
const GRANTED_BY: Readonly<Record<string, string>> = {
  'indices:data/write/index:op_type/index': '[create,index,write,all]',
  'indices:data/write/index:op_type/create': '[create_doc,create,index,write,all]',
  'indices:data/write/update': '[index,write,all]',
  'indices:data/write/delete': '[delete,write,all]',
};

/** Elasticsearch's refusal of one bulk item, answered inside the bulk's 200 with status 403. */
export function unauthorizedBulkItem(principal: Principal, needed: RequiredPrivilege): ProxyError {
  return new ProxyError('WRITE_UNAUTHORIZED', unauthorizedReason(principal, needed, GRANTED_BY[needed.action] ?? '[write,all]'));
}

function unauthorizedReason(principal: Principal, needed: RequiredPrivilege, grantedBy: string): string {
  const who = principal.apiKeyId !== null ? `API key id [${principal.apiKeyId}] of user [${principal.username}]` : `user [${principal.username}]`;
  return `action [${needed.action}] is unauthorized for ${who} with effective roles [${[...principal.roles].sort().join(',')}] on indices [${needed.index}], this action is granted by the index privileges ${grantedBy}`;
}
