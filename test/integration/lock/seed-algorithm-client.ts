import type { ZkClient } from '../../../src/zookeeper-client/zk-client.js';
import { isZkCode } from '../../../src/zookeeper-client/zk-errors.js';

/**
 * A client following the original Contentserv document literally: persistent node per object,
 * `LockType-` EPHEMERAL_SEQUENTIAL child, sort all children by name, first + privateLock
 * available -> create privateLock; otherwise watch the parent and repeat. Unlock deletes its
 * node and privateLock.
 */
export class SeedAlgorithmClient {
  constructor(
    private readonly client: ZkClient,
    private readonly docPath: string,
    private readonly lockType: 'A' | 'B',
  ) {}

  async lock(): Promise<string> {
    await this.createPersistentPath();
    const created = await this.client.create(`${this.docPath}/${this.lockType}-`, '', 'ephemeralSequential');
    const mine = created.slice(created.lastIndexOf('/') + 1);
    for (;;) {
      let changed!: () => void;
      const parentChanged = new Promise<void>((resolve) => (changed = resolve));
      const children = (await this.client.getChildrenWatched(this.docPath, () => changed())).sort();
      if (children[0] === mine && !children.includes('privateLock')) {
        try {
          await this.client.create(`${this.docPath}/privateLock`, '', 'ephemeral');
          return mine;
        } catch (error) {
          if (!isZkCode(error, 'NODEEXISTS')) throw error;
        }
      }
      await parentChanged;
    }
  }

  async unlock(mine: string): Promise<void> {
    await this.client.delete(`${this.docPath}/${mine}`);
    await this.client.delete(`${this.docPath}/privateLock`);
  }

  private async createPersistentPath(): Promise<void> {
    const parts = this.docPath.split('/').filter((p) => p !== '');
    let path = '';
    for (const part of parts) {
      path += `/${part}`;
      try {
        await this.client.create(path, '', 'persistent');
      } catch (error) {
        if (!isZkCode(error, 'NODEEXISTS')) throw error;
      }
    }
  }
}
