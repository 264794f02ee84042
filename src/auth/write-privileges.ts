import { LRUCache } from 'lru-cache';
import { ProxyError } from '../errors/proxy-error.js';
import type { UpstreamForwarder } from '../elasticsearch/upstream-forwarder.js';
import type { BulkAction } from '../classify/bulk-action-line.js';
import type { WriteRoute } from '../write/write-request.js';
import type { Principal } from './principal.js';

/** The actions a write is authorized as, on its index, in the order Elasticsearch checks them. */
export interface RequiredPrivilege {
  readonly index: string;
  readonly actions: readonly string[];
}

/** Elasticsearch: server/src/main/java/org/elasticsearch/action/index/TransportIndexAction.java (NAME). */
const INDEX_ACTION = 'indices:data/write/index';
/** Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authz/AuthorizationService.java (IMPLIED_INDEX_ACTION, IMPLIED_CREATE_ACTION). */
const INDEX_ITEM_ACTION = 'indices:data/write/index:op_type/index';
const CREATE_ITEM_ACTION = 'indices:data/write/index:op_type/create';
const UPDATE_ACTION = 'indices:data/write/update';
const DELETE_ACTION = 'indices:data/write/delete';

/**
 * What a single-document write is authorized as. Elasticsearch authorizes actions, not privilege
 * names: an index or create runs as `indices:data/write/index` and then as a one-item bulk whose
 * item is authorized by its op type (AuthorizationService.java, getAction of a BulkItemRequest);
 * an update as `indices:data/write/update`, a delete as `indices:data/write/delete`. Asking with
 * these names (`_has_privileges` takes action names as index privileges) gets the answer the
 * cluster's own authorization gives: the deprecated `create` privilege grants
 * `indices:data/write/index*` and so index writes, `create_doc` only creates.
 * Elasticsearch: x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authz/privilege/IndexPrivilege.java
 * A bulk is not checked as a whole: Elasticsearch authorizes its items one by one and answers
 * those it refuses inside a 200, so refusing the whole bulk here would change the answer.
 */
export function requiredPrivilege(route: WriteRoute): RequiredPrivilege | null {
  if (route.kind !== 'single') return null;
  switch (route.op) {
    case 'index':
      return { index: route.index, actions: [INDEX_ACTION, INDEX_ITEM_ACTION] };
    case 'create':
      return { index: route.index, actions: [INDEX_ACTION, CREATE_ITEM_ACTION] };
    case 'update':
      return { index: route.index, actions: [UPDATE_ACTION] };
    case 'delete':
      return { index: route.index, actions: [DELETE_ACTION] };
  }
}

/**
 * What a bulk item is authorized as (per item, on the index the item resolves to).
 * Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authz/AuthorizationService.java (getAction of a BulkItemRequest)
 */
export function bulkItemPrivilege(index: string, action: BulkAction): RequiredPrivilege {
  const actions = { index: INDEX_ITEM_ACTION, create: CREATE_ITEM_ACTION, update: UPDATE_ACTION, delete: DELETE_ACTION } as const;
  return { index, actions: [actions[action]] };
}

/** Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/rest/action/user/RestHasPrivilegesAction.java */
export const HAS_PRIVILEGES_PATH = '/_security/user/_has_privileges';

const GRANTED = '';

/**
 * The cluster's answer to "may these credentials do these actions on this index", asked with
 * `_has_privileges` and kept per credential (its keyed hash), index and actions for the verdict
 * cache's time to live.
 */
export class PrivilegeCheck {
  /** Per credential, index and actions: the first action refused, or GRANTED. */
  private readonly refused: LRUCache<string, string>;
  private readonly asking = new Map<string, Promise<string>>();

  constructor(
    private readonly forwarder: UpstreamForwarder,
    size: number,
    private readonly ttlMs: () => number,
  ) {
    this.refused = new LRUCache({ max: size, ttl: 1 });
  }

  /** The first of `needed.actions` the cluster does not grant these credentials on its index; null when it grants them all. */
  async refusedAction(credentialKey: string, credentials: readonly string[], needed: RequiredPrivilege): Promise<string | null> {
    const key = `${credentialKey}\0${needed.index}\0${needed.actions.join(',')}`;
    const known = this.refused.get(key);
    if (known !== undefined) return known === GRANTED ? null : known;
    const pending = this.asking.get(key) ?? this.ask(key, credentials, needed);
    const answer = await pending;
    return answer === GRANTED ? null : answer;
  }

  private ask(key: string, credentials: readonly string[], needed: RequiredPrivilege): Promise<string> {
    const question = this.firstRefused(credentials, needed)
      .then((refused) => {
        const ttl = this.ttlMs();
        if (ttl > 0) this.refused.set(key, refused, { ttl });
        return refused;
      })
      .finally(() => this.asking.delete(key));
    this.asking.set(key, question);
    return question;
  }

  private async firstRefused(credentials: readonly string[], needed: RequiredPrivilege): Promise<string> {
    const [authorization, runAs] = credentials;
    const rawHeaders = ['content-type', 'application/json'];
    if (authorization !== undefined && authorization !== '') rawHeaders.push('authorization', authorization);
    if (runAs !== undefined && runAs !== '') rawHeaders.push('es-security-runas-user', runAs);
    const body = Buffer.from(JSON.stringify({ index: [{ names: [needed.index], privileges: needed.actions }] }));
    const answer = await this.forwarder.exchange({ method: 'POST', url: HAS_PRIVILEGES_PATH, rawHeaders, body });
    if (answer.status !== 200) {
      throw new ProxyError('UPSTREAM_UNREACHABLE', `the cluster answered the privilege check with status ${answer.status}`);
    }
    const parsed = JSON.parse(answer.body.toString('utf8')) as { has_all_requested?: unknown; index?: Record<string, Record<string, unknown> | undefined> };
    if (parsed.has_all_requested === true) return GRANTED;
    const answered = parsed.index?.[needed.index] ?? {};
    return needed.actions.find((action) => answered[action] !== true) ?? needed.actions[0] ?? GRANTED;
  }
}

/**
 * The privileges that grant each document write action, least access first, as Elasticsearch
 * names them in its 403. Elasticsearch: x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authz/privilege/IndexPrivilege.java
 * (`create` still grants `indices:data/write/index*`, `create_doc` only the transport action and
 * creates, `index` also updates, `delete` deletes).
 */
const GRANTED_BY: Readonly<Record<string, string>> = {
  [INDEX_ACTION]: '[create_doc,create,index,write,all]',
  [INDEX_ITEM_ACTION]: '[create,index,write,all]',
  [CREATE_ITEM_ACTION]: '[create_doc,create,index,write,all]',
  [UPDATE_ACTION]: '[index,write,all]',
  [DELETE_ACTION]: '[delete,write,all]',
};

/**
 * Elasticsearch's refusal of an unauthorized action, worded as its authorization service does: a
 * single write's 403, or a bulk item's, answered inside the bulk's 200.
 * Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/authz/AuthorizationDenialMessages.java
 */
export function unauthorizedAction(principal: Principal, index: string, action: string): ProxyError {
  const who = principal.apiKeyId !== null ? `API key id [${principal.apiKeyId}] of user [${principal.username}]` : `user [${principal.username}]`;
  return new ProxyError(
    'WRITE_UNAUTHORIZED',
    `action [${action}] is unauthorized for ${who} with effective roles [${[...principal.roles].sort().join(',')}] on indices [${index}], this action is granted by the index privileges ${GRANTED_BY[action] ?? '[write,all]'}`,
  );
}
