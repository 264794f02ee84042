import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { ZK_ADDON_INTERFACE, ZK_ADDON_NAME, ZkAddonError, checkZkAddon, loadZkAddon } from '../../../src/zookeeper-client/zk-addon.js';

/** The start-up check on our ZooKeeper addon: only our own build, of this version's interface. */
describe('checkZkAddon', () => {
  const ours = { addon: ZK_ADDON_NAME, interfaceVersion: ZK_ADDON_INTERFACE, ZooKeeper: function ZooKeeper() {} };

  it('accepts our addon', () => {
    expect(checkZkAddon(ours)).toBe(ours);
  });

  it.each([
    ['the zookeeper package binding', { ZooKeeper: function ZooKeeper() {} }, /is not es-lock-proxy's/],
    ['another addon', { addon: 'something-else', interfaceVersion: 1, ZooKeeper: function ZooKeeper() {} }, /is not es-lock-proxy's/],
    ['an older build of ours', { ...ours, interfaceVersion: ZK_ADDON_INTERFACE - 1 }, /another version of es-lock-proxy/],
    ['a module without the class', { addon: ZK_ADDON_NAME, interfaceVersion: ZK_ADDON_INTERFACE }, /exports no ZooKeeper class/],
  ])('refuses %s with one line naming the fix', (_name, module, problem) => {
    const error = (() => {
      try {
        checkZkAddon(module);
        return null;
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ZkAddonError);
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(problem);
    expect(message).toContain('npm install-scripts approve zookeeper es-lock-proxy && npm rebuild zookeeper es-lock-proxy');
    expect(message).toContain('proxy.lock.service=in-process');
    expect(message).not.toContain('\n');
  });

  it('loads the addon built in this checkout', () => {
    expect(typeof loadZkAddon().ZooKeeper).toBe('function');
  });
});
