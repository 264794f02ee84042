import { afterEach, describe, expect, inject, it } from 'vitest';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ZkWireTap } from '../../support/zk-wire-tap.js';
import { BACKGROUND, send } from '../write/write-client.js';
import { ALICE, basic, lockCreates, SECURITY, securedSettings, warmUp } from './security-fixture.js';

const READER = basic('reader', 'reader-secret');

describe('proxy.auth.privileges=on: a write the cluster would refuse with 403 takes no lock', () => {
  let stack: WriteStack | undefined;
  let tap: ZkWireTap | undefined;
  afterEach(async () => {
    await stack?.close();
    await tap?.close();
    stack = undefined;
    tap = undefined;
  });

  it('a user without the index privilege gets the cluster’s 403, with nothing locked; one with it writes; answers are kept', async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings({ privileges: 'on' }) });
    await warmUp(stack, tap);
    tap.resetCounts();
    const refused = await send(stack.urls[0]!, 'PUT', '/private/_doc/1', { by: 'reader' }, { ...BACKGROUND, ...READER });
    const direct = await fetch(`${stack.standIn.url}/private/_doc/1`, { method: 'PUT', headers: { 'content-type': 'application/json', ...READER }, body: '{}' });
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual(await direct.json());
    expect(lockCreates(tap)).toBe(0);
    expect(stack.standIn.document('private', '1')).toBeUndefined();

    expect((await send(stack.urls[0]!, 'DELETE', '/private/_doc/1', undefined, { ...BACKGROUND, ...READER })).status).toBe(403);
    expect((await send(stack.urls[0]!, 'PUT', '/private/_doc/1', { by: 'alice' }, { ...BACKGROUND, ...ALICE })).status).toBe(201);
    expect((await send(stack.urls[0]!, 'PUT', '/private/_doc/1', { by: 'reader' }, { ...BACKGROUND, ...READER })).status).toBe(403);
    expect(stack.standIn.document('private', '1')?.source).toEqual({ by: 'alice' });
    // alice on warm-up, then reader/index, reader/delete, alice/index on private: one question each,
    // the repeated write answered from memory.
    expect(stack.standIn.requests.filter((request) => request.url === '/_security/user/_has_privileges')).toHaveLength(4);
  });
});

describe('proxy.auth.privileges=on asks with the action names Elasticsearch authorizes', () => {
  let stack: WriteStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  const LEGACY = basic('legacy', 'legacy-secret');
  const CREATOR = basic('creator', 'creator-secret');

  it('the deprecated create privilege grants index writes; create_doc grants creates but not index writes', async () => {
    stack = await startWriteStack({ zookeeper: inject('zookeeperConnect'), standIn: { security: SECURITY }, settings: securedSettings({ privileges: 'on' }) });
    expect((await send(stack.urls[0]!, 'PUT', '/legacy/_doc/1', { by: 'legacy' }, { ...BACKGROUND, ...LEGACY })).status).toBe(201);
    expect((await send(stack.urls[0]!, 'PUT', '/legacy/_create/2', { by: 'legacy' }, { ...BACKGROUND, ...LEGACY })).status).toBe(201);
    expect((await send(stack.urls[0]!, 'PUT', '/docs/_create/1', { by: 'creator' }, { ...BACKGROUND, ...CREATOR })).status).toBe(201);
    const refused = await send(stack.urls[0]!, 'PUT', '/docs/_doc/2', { by: 'creator' }, { ...BACKGROUND, ...CREATOR });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({
      type: 'security_exception',
      reason:
        'action [indices:data/write/index:op_type/index] is unauthorized for user [creator] with effective roles [doc-creator] on indices [docs], this action is granted by the index privileges [create,index,write,all]',
    });
    expect(stack.standIn.document('legacy', '1')?.source).toEqual({ by: 'legacy' });
    expect(stack.standIn.document('legacy', '2')?.source).toEqual({ by: 'legacy' });
    expect(stack.standIn.document('docs', '1')?.source).toEqual({ by: 'creator' });
    expect(stack.standIn.document('docs', '2')).toBeUndefined();
  });
});

describe('proxy.auth.privileges=on: bulk items are authorized one by one, as Elasticsearch does', () => {
  let stack: WriteStack | undefined;
  let tap: ZkWireTap | undefined;
  afterEach(async () => {
    await stack?.close();
    await tap?.close();
    stack = undefined;
    tap = undefined;
  });

  const SCOPED = basic('scoped', 'scoped-secret');
  const ndjson = (lines: readonly unknown[]): string => lines.map((line) => `${JSON.stringify(line)}\n`).join('');

  it('an item on an index its principal may not write takes no lock and is answered 403 security_exception in the 200; the others are written', async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings({ privileges: 'on' }) });
    await warmUp(stack, tap);
    tap.resetCounts();
    const body = ndjson([
      { index: { _index: 'allowed-a', _id: '1' } },
      { by: 'scoped' },
      { index: { _index: 'denied-b', _id: '1' } },
      { by: 'scoped' },
      { delete: { _index: 'denied-b', _id: '2' } },
      { create: { _index: 'allowed-a', _id: '2' } },
      { by: 'scoped' },
    ]);
    const answer = await send(stack.urls[0]!, 'POST', '/_bulk', body, { 'content-type': 'application/x-ndjson', ...BACKGROUND, ...SCOPED });
    expect(answer.status).toBe(200);
    const items = answer.json.items as Record<string, { _index: string; _id: string; status: number; error?: { type: string; reason: string } }>[];
    expect(answer.json.errors).toBe(true);
    expect(items.map((item) => Object.keys(item)[0])).toEqual(['index', 'index', 'delete', 'create']);
    expect(items[0]!.index).toMatchObject({ _index: 'allowed-a', _id: '1', status: 201 });
    expect(items[1]!.index).toEqual({
      _index: 'denied-b',
      _id: '1',
      status: 403,
      error: {
        type: 'security_exception',
        reason:
          'action [indices:data/write/index:op_type/index] is unauthorized for user [scoped] with effective roles [scoped-writer] on indices [denied-b], this action is granted by the index privileges [create,index,write,all]',
      },
    });
    expect(items[2]!.delete).toMatchObject({ _index: 'denied-b', _id: '2', status: 403, error: { type: 'security_exception' } });
    expect(items[2]!.delete!.error!.reason).toContain('action [indices:data/write/delete] is unauthorized for user [scoped]');
    expect(items[3]!.create).toMatchObject({ _index: 'allowed-a', _id: '2', status: 201 });
    expect(stack.standIn.document('allowed-a', '1')?.source).toEqual({ by: 'scoped' });
    expect(stack.standIn.document('allowed-a', '2')?.source).toEqual({ by: 'scoped' });
    expect(stack.standIn.documents('denied-b').size).toBe(0);
    // Nothing of the refused items went to the cluster.
    expect(stack.standIn.requests.some((request) => request.url.includes('_bulk') && request.body.includes('denied-b'))).toBe(false);
  });

  it('a bulk whose every item is refused is answered without any lock or forward', async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings({ privileges: 'on' }) });
    await warmUp(stack, tap);
    tap.resetCounts();
    const before = stack.standIn.requests.filter((request) => request.url.includes('_bulk')).length;
    const answer = await send(stack.urls[0]!, 'POST', '/denied-c/_bulk', ndjson([{ index: { _id: '1' } }, { n: 1 }]), { 'content-type': 'application/x-ndjson', ...SCOPED });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ errors: true, items: [{ index: { _index: 'denied-c', _id: '1', status: 403, error: { type: 'security_exception' } } }] });
    expect(lockCreates(tap)).toBe(0);
    expect(stack.standIn.requests.filter((request) => request.url.includes('_bulk')).length).toBe(before);
    expect(stack.standIn.documents('denied-c').size).toBe(0);
  });
});
