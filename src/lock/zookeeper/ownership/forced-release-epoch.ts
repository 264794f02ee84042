import type { Logger } from 'pino';
import { isZkCode } from '../../../zookeeper-client/zk-errors.js';
import { forcedReleasesPath } from '../znode-names.js';
import type { Link } from '../session/connection.js';
import { type ContainerCache, lockRootNodes } from '../queue/containers.js';
import type { LockZk, NodeStat, ZkOp } from '../session/lock-zk.js';
import { classifyFailure } from '../session/round-trip.js';

/**
 * The forced-release epoch: the data version of the persistent `{root}/.forced-releases` node,
 * which every forced release bumps in its own transaction. A release checks it in the same
 * transaction as its delete, so a holder whose lock was force-released deletes nothing — even
 * after the server reaped the emptied document container and the next holder re-created it
 * (document node and privateLock both start again at version 0; ZooKeeper's `check` compares
 * data versions only, never a czxid).
 *
 * `known()` is a version read before now, never more than the node's version at any later
 * moment: an acquisition that records it before it creates privateLock may check against it.
 * A check that fails (some forced release happened since, maybe of another document) sends the
 * release the slow way: read the epoch, then verify privateLock's owner and czxid, then delete
 * with a check of the epoch just read.
 *
 * It is also how a holder learns that its lock was force-released: the epoch node's mzxid is the
 * zxid of the latest forced release, and every read that shows a newer one (the data watch fires
 * with the forced release's transaction) calls `onForcedRelease`, which verifies the locks whose
 * privateLock is older. One watch per session instead of one read and watch per grant.
 */
export class ForcedReleaseEpoch {
  readonly path: string;
  private readonly root: string;
  private readonly containers: ContainerCache;
  private readonly logger: Logger;
  private version = 0;
  private mzxid = 0;
  private watchedGeneration = -1;
  /** Verifies the locks whose privateLock is older than `forcedZxid` (the engine's). */
  private readonly onForcedRelease: (forcedZxid: number) => void;

  constructor(root: string, containers: ContainerCache, logger: Logger, onForcedRelease: (forcedZxid: number) => void) {
    this.root = root;
    this.path = forcedReleasesPath(root);
    this.containers = containers;
    this.logger = logger;
    this.onForcedRelease = onForcedRelease;
  }

  known(): number {
    return this.version;
  }

  /** The zxid of the latest forced release seen (0: none yet): a privateLock created before it may be gone. */
  latestForcedZxid(): number {
    return this.mzxid;
  }

  /** The check a release puts in front of its deletes. */
  checkOp(epoch: number): ZkOp {
    return { type: 'check', path: this.path, version: epoch };
  }

  /** On every connect: a new session re-reads and re-arms the watch (one session keeps its own). */
  connected(link: Link): void {
    if (this.watchedGeneration === link.generation) return;
    this.watchedGeneration = link.generation;
    void this.watch(link);
  }

  /** Reads the epoch now (creating the node when missing); the caller checks against it next. */
  async read(zk: LockZk): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        return this.learned((await zk.get(this.path)).stat);
      } catch (error) {
        if (!isZkCode(error, 'NONODE') || attempt > 0) throw error;
        // Removed by hand since this process created or saw it: create it again.
        this.containers.forgetPath(this.path);
        await this.ensureNode(zk);
      }
    }
  }

  /** Ensures the node, then keeps `known()` current through a data watch. */
  private async watch(link: Link): Promise<void> {
    try {
      await this.ensureNode(link.zk);
      const node = await link.zk.getWatched(this.path, (type) => {
        if (this.watchedGeneration !== link.generation) return;
        // Removed by hand: the next look creates it again.
        if (type === 'deleted') this.containers.forgetPath(this.path);
        void this.watch(link);
      });
      this.learned(node.stat);
    } catch (error) {
      // Lost link or ended session: the next connect arms it again; until then releases whose
      // check fails take the slow way.
      if (this.watchedGeneration === link.generation) this.watchedGeneration = -1;
      if (classifyFailure(error).kind === 'refused') this.logger.error({ err: error, path: this.path }, 'cannot read the forced-release epoch');
    }
  }

  private learned(stat: NodeStat): number {
    this.version = stat.version;
    if (stat.mzxid > this.mzxid) {
      this.mzxid = stat.mzxid;
      this.onForcedRelease(stat.mzxid);
    }
    return stat.version;
  }

  /** The root chain and the epoch node, created once per process like every lock's parents. */
  private ensureNode(zk: LockZk): Promise<void> {
    return this.containers.ensure(zk, lockRootNodes(this.root));
  }
}
