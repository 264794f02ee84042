import { connectRawClient } from '../../../src/lock/zk-raw-client.js';
import { isZkCode } from '../../../src/lock/zk-errors.js';

/** Every znode below `root` (depth first), or [] when `root` does not exist. */
export async function znodesUnder(servers: string, root: string): Promise<string[]> {
  const connection = await connectRawClient(servers, 4_000);
  try {
    const found: string[] = [];
    const walk = async (path: string): Promise<void> => {
      let children: string[];
      try {
        children = await connection.client.getChildren(path);
      } catch (error) {
        if (isZkCode(error, 'NONODE')) return;
        throw error;
      }
      for (const child of children) {
        found.push(`${path}/${child}`);
        await walk(`${path}/${child}`);
      }
    };
    await walk(root);
    return found;
  } finally {
    await connection.close();
  }
}

/** Queue entries and privateLock nodes: what a proxy that let go of every lock must not leave. */
export function lockEntries(paths: readonly string[], root: string): string[] {
  return paths.filter((path) => path.slice(root.length).split('/').length > 3);
}
