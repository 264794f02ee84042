import type { LockEngineStats } from '../../lock-stats.js';
import { loadZkAddon } from '../../../zookeeper-client/zk-addon.js';
import { ZkClient, type ZkClientEvents, type ZkClientOptions } from '../../../zookeeper-client/zk-client.js';
import { GatedZk } from './gated-zk.js';
import type { LockZk } from './lock-zk.js';
import { RequestGate } from './request-gate.js';

/** One ZooKeeper handle as the session drives it (connect, the session events, close). */
export interface SessionHandle {
  /** Hex session id, as in `NodeStat.ephemeralOwner`. */
  readonly sessionId: string;
  /** Negotiated session timeout in ms (0 before the first connect). */
  readonly negotiatedTimeoutMs: number;
  on<E extends keyof ZkClientEvents>(event: E, listener: (...args: ZkClientEvents[E]) => void): this;
  connect(): void;
  close(): Promise<void>;
  addAuth(scheme: string, credentials: string): Promise<void>;
}

/** A new handle and the engine's port on it, made together (the port counts the handle's requests). */
export interface OpenedHandle {
  readonly handle: SessionHandle;
  readonly zk: LockZk;
}

/**
 * Where the session gets its handles: our ZooKeeper addon in production; the simulation suite
 * passes its simulated ZooKeeper here, so the same engine runs on a virtual clock.
 */
export interface ZkHandles {
  open(options: ZkClientOptions): OpenedHandle;
}

/** Throws `ZkAddonError` at once when our ZooKeeper addon cannot be used (see zk-addon.ts). */
export function addonHandles(stats: LockEngineStats, creatorOnly: boolean, maxOutstandingOps: number): ZkHandles {
  loadZkAddon();
  return {
    open(options) {
      const client = new ZkClient(options, stats);
      return { handle: client, zk: new GatedZk(client, new RequestGate(maxOutstandingOps), creatorOnly) };
    },
  };
}
