import type { NodeMode, WatchEventType, ZkClient } from '../zk-client.js';
import { ZkError, ZK_RC } from '../zk-errors.js';
import type { ChildrenRead, LockZk, NodeRead, NodeStat, TxnOp, TxnOutcome } from './lock-zk.js';
import type { RequestGate } from './request-gate.js';

/** PLACEHOLDER until the native addon with multi/create2/getChildren2 is merged (multi-ready). */
export class GatedZk implements LockZk {
  constructor(
    private readonly client: ZkClient,
    private readonly gate: RequestGate,
    private readonly restrictAcl: boolean,
  ) {}

  get sessionId(): string {
    return this.client.sessionId;
  }

  create(path: string, data: string, mode: NodeMode): Promise<{ readonly path: string; readonly stat: NodeStat }> {
    return this.gate.run(1, async () => ({ path: await this.client.create(path, data, mode), stat: missingStat() }));
  }

  children(path: string): Promise<ChildrenRead> {
    return this.gate.run(1, async () => ({ children: await this.client.getChildren(path), stat: missingStat() }));
  }

  childrenWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<readonly string[]> {
    return this.gate.run(1, () => this.client.getChildrenWatched(path, onEvent));
  }

  get(path: string): Promise<NodeRead> {
    return this.gate.run(1, async () => withStat(await this.client.get(path)));
  }

  getWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<NodeRead> {
    return this.gate.run(1, async () => withStat(await this.client.getWatched(path, onEvent)));
  }

  delete(path: string, version: number): Promise<void> {
    return this.gate.run(1, () => this.client.delete(path, version));
  }

  multi(_ops: readonly TxnOp[]): Promise<TxnOutcome> {
    void this.restrictAcl;
    return Promise.reject(new ZkError(ZK_RC.SYSTEMERROR, 'multi needs the native addon'));
  }
}

function missingStat(): NodeStat {
  return { czxid: 0, version: 0, ctime: 0, ephemeralOwner: '0' };
}

function withStat(node: { readonly stat: { readonly version: number; readonly ctime: number; readonly ephemeralOwner: string }; readonly data: Buffer }): NodeRead {
  return { data: node.data, stat: { ...missingStat(), ...node.stat } };
}
