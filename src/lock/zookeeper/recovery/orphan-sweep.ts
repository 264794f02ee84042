import type { Logger } from 'pino';
import { parseNodeData } from '../../lock-node-data.js';
import { parseEntryName } from '../../queue-order.js';
import { PRIVATE_LOCK } from '../znode-names.js';
import type { Connection, Link } from '../session/connection.js';
import type { ForcedReleaseEpoch } from '../ownership/forced-release-epoch.js';
import type { ZkOp } from '../session/lock-zk.js';
import { classifyFailure } from '../session/round-trip.js';

/** What this process's live document locks claim; the engine answers from its map of them. */
export interface LocalClaims {
  /**
   * A live lock of `docPath` knows this node as its own (its queue entry, or the privateLock it
   * holds): not even read.
   */
  knows(docPath: string, name: string): boolean;
  /**
   * The node `name` with this guid may be a live lock's: the lock of `docPath` has this guid (the
   * node is its own, or will be once an answer on its way arrives), a lock whose release is on
   * its way had it, or — for privateLock, whose name every holder reuses — the live lock of the
   * document may have created it since it was read (a create of its own in flight, or held).
   * Guids are never reused: a guid no lock claims now is nobody's for good.
   */
  claims(docPath: string, name: string, guid: string): boolean;
}

interface Orphan {
  readonly path: string;
  readonly name: string;
  readonly version: number;
  readonly guid: string;
}

/**
 * Finds and deletes the lock nodes of this process's session that no local lock claims: a
 * privateLock or queue entry whose create the server applied while the client was told otherwise
 * (a reply lost or misreported across a reconnect), or that anything else left behind. Left
 * there, such a node blocks every writer of its document, in every process, until the session
 * ends. One `getEphemerals` (ZooKeeper 3.6+) lists the session's nodes under the lock root; a
 * node no live lock knows is read, and deleted when its guid is no live lock's — checked when the
 * delete is issued, so a lock created meanwhile (new guid) or one whose create answer is still on
 * its way (its guid is claimed) is never touched. The delete checks the forced-release epoch read
 * before the node: after an operator's forced release nothing is deleted.
 */
export class OrphanSweep {
  private readonly root: string;
  private readonly connection: Connection;
  private readonly epoch: ForcedReleaseEpoch;
  private readonly logger: Logger;
  private readonly local: LocalClaims;
  private readonly removed: (count: number) => void;
  private running: Promise<number> | null = null;
  private again = false;
  /** The server cannot list ephemerals (before 3.6): sweeping is off for this process. */
  private unsupported = false;

  constructor(root: string, connection: Connection, epoch: ForcedReleaseEpoch, logger: Logger, local: LocalClaims, removed: (count: number) => void) {
    this.root = root;
    this.connection = connection;
    this.epoch = epoch;
    this.logger = logger;
    this.local = local;
    this.removed = removed;
  }

  /**
   * Sweeps now, or once more right after the sweep under way (whose listing may predate what
   * the caller saw). Resolves with the nodes deleted by the sweep it ran or joined; never rejects.
   */
  sweep(): Promise<number> {
    if (this.running !== null) {
      this.again = true;
      return this.running;
    }
    const run = this.runUntilQuiet().finally(() => {
      this.running = null;
    });
    this.running = run;
    return run;
  }

  private async runUntilQuiet(): Promise<number> {
    let total = 0;
    do {
      this.again = false;
      total += await this.once();
    } while (this.again);
    return total;
  }

  private async once(): Promise<number> {
    const link = this.connection.current();
    // Not connected: the next connect sweeps again.
    if (link === null || this.unsupported) return 0;
    try {
      return await this.sweepOn(link);
    } catch (error) {
      const failure = classifyFailure(error);
      if (failure.kind === 'refused' && failure.error.code === 'UNIMPLEMENTED') {
        this.unsupported = true;
        this.logger.warn('ZooKeeper cannot list a session\'s ephemeral nodes (getEphemerals needs 3.6+): orphaned lock nodes are removed only when the session ends');
      } else if (failure.kind === 'refused') {
        this.logger.error({ err: failure.error }, 'orphan sweep failed');
      }
      return 0;
    }
  }

  private async sweepOn(link: Link): Promise<number> {
    const { zk } = link;
    // Read before the nodes: a forced release after this read refuses the deletes below.
    const epoch = await this.epoch.read(zk);
    const byDocument = new Map<string, string[]>();
    for (const path of await zk.ephemerals(`${this.root}/`)) {
      const node = this.lockNode(path);
      if (node === null || this.local.knows(node.docPath, node.name)) continue;
      const names = byDocument.get(node.docPath) ?? [];
      names.push(node.name);
      byDocument.set(node.docPath, names);
    }
    const removed = await Promise.all([...byDocument].map(([docPath, names]) => this.sweepDocument(link, epoch, docPath, names)));
    return removed.reduce((sum, count) => sum + count, 0);
  }

  /** A privateLock or queue entry of a document under the root (`{root}/{index}/{id}/{name}`), or null. */
  private lockNode(path: string): { readonly docPath: string; readonly name: string } | null {
    const segments = path.slice(this.root.length + 1).split('/');
    const name = segments[2];
    if (segments.length !== 3 || name === undefined) return null;
    if (name !== PRIVATE_LOCK && parseEntryName(name) === null) return null;
    return { docPath: path.slice(0, path.length - name.length - 1), name };
  }

  private async sweepDocument(link: Link, epoch: number, docPath: string, names: readonly string[]): Promise<number> {
    const { zk } = link;
    // The document before its nodes (one session answers in order): a privateLock of ours at its
    // read was granted at that version, and the delete checks it (owner-token.ts) — deleted by hand
    // and taken by the next holder meanwhile, it is not ours to delete any more.
    // Its answer handled at once: it comes first, and a refusal must not wait unhandled for the other reads.
    const docRead = names.includes(PRIVATE_LOCK) ? zk.get(docPath).then((doc) => doc.stat.version, () => null) : null;
    const reads = await Promise.allSettled(names.map((name) => zk.get(`${docPath}/${name}`)));
    const docVersion = docRead === null ? null : await docRead;
    const candidates: Orphan[] = [];
    for (const [i, read] of reads.entries()) {
      // Gone meanwhile (released, reconciled), or not readable now: not this sweep's to judge.
      if (read.status === 'rejected') continue;
      const { stat, data } = read.value;
      const guid = parseNodeData(data).guid;
      if (stat.ephemeralOwner !== zk.sessionId || guid === null) continue;
      candidates.push({ path: `${docPath}/${names[i]!}`, name: names[i]!, version: stat.version, guid });
    }
    // Judged right before the delete is issued, after every read: a create this process issues
    // later is ordered after the delete on the session.
    const orphans = candidates.filter((orphan) => !this.local.claims(docPath, orphan.name, orphan.guid));
    if (orphans.length === 0) return 0;
    const takesPrivateLock = orphans.some((orphan) => orphan.name === PRIVATE_LOCK);
    // Unread, the document's version cannot vouch for privateLock: leave it for the next sweep.
    if (takesPrivateLock && docVersion === null) return 0;
    const ownerCheck: ZkOp[] = takesPrivateLock && docVersion !== null ? [{ type: 'check', path: docPath, version: docVersion }] : [];
    const ops: ZkOp[] = [this.epoch.checkOp(epoch), ...ownerCheck, ...orphans.map((orphan): ZkOp => ({ type: 'delete', path: orphan.path, version: orphan.version }))];
    const outcome = await zk.multi(ops);
    if (!outcome.ok) {
      // A forced release since the epoch was read, or a node gone meanwhile: the next sweep looks again.
      this.logger.debug({ docPath, code: outcome.code }, 'orphan sweep: delete refused, left for the next sweep');
      return 0;
    }
    this.logger.warn({ docPath, nodes: orphans.map((orphan) => orphan.name), guids: [...new Set(orphans.map((orphan) => orphan.guid))] }, 'removed lock nodes of this session that no local lock claimed');
    this.removed(orphans.length);
    return orphans.length;
  }
}
