import type { Logger } from 'pino';
import type { LockAcquisition } from '../lock-acquisition.js';
import type { LockKey } from '../lock-engine.js';
import type { LockEvents } from '../lock-events.js';
import type { PrefixRanks } from '../queue-order.js';
import type { Connection } from './session/connection.js';
import type { ContainerCache, ContentionHints } from './queue/containers.js';
import type { ForcedReleaseEpoch } from './ownership/forced-release-epoch.js';
import type { HandOverBounds } from './cohort/handover-policy.js';
import type { OrphanSweep } from './recovery/orphan-sweep.js';
import type { RecentReleases } from './cohort/recent-releases.js';
import type { ReleaseBatcher } from './ownership/release-batcher.js';

/** What every document lock of one engine shares. */
export interface EngineContext {
  readonly root: string;
  readonly prefixes: PrefixRanks;
  readonly bounds: HandOverBounds;
  /** `zookeeper.lock.linger.ms`: how long an unused lock is kept for this process's next request. */
  readonly lingerMs: number;
  /** A document node created with a lock's privateLock goes with that lock's release (`zookeeper.lock.document.cleanup=release`). */
  readonly deletesCreatedDocuments: boolean;
  readonly recentReleases: RecentReleases;
  readonly connection: Connection;
  readonly containers: ContainerCache;
  readonly contention: ContentionHints;
  readonly releases: ReleaseBatcher;
  readonly forcedEpoch: ForcedReleaseEpoch;
  /** Guids of document locks detached while their release is on its way: not orphans. */
  readonly releasing: Set<string>;
  /** Deletes nodes of our session that no live lock claims (after a reconnect, an unknown outcome, a failed acquisition). */
  readonly orphans: OrphanSweep;
  readonly events: LockEvents;
  readonly logger: Logger;
  /** This document lock is finished with ZooKeeper: new arrivals for its key start a new one. */
  detach(docPath: string, lock: object): void;
  /** A release or yield found its privateLock no longer its own (owner-token.ts): the lock was lost while held, unseen. */
  lockLostAtRelease(docPath: string, code: string): void;
  /** Waiters of a lock that could not be kept (lost) start over in a new document lock. */
  rehome(key: LockKey, waiters: readonly LockAcquisition[]): void;
}
