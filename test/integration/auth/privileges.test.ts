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
