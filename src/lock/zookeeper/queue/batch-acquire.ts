import { queueFromChildren, rankOf } from '../../queue-order.js';
import { isZkCode } from '../../../zookeeper-client/zk-errors.js';
import { PRIVATE_LOCK, indexPath } from '../znode-names.js';
import type { Link } from '../session/connection.js';
import { type Sighting, lockRootNodes } from './containers.js';
import type { DocumentLock } from '../document-lock.js';
import type { EngineContext } from '../engine-context.js';
import type { TxnOpResult, TxnOutcome, ZkOp } from '../session/lock-zk.js';
import { classifyFailure } from '../session/round-trip.js';
import { bumpDocument, tokenOf } from '../ownership/owner-token.js';

/** Keys per transaction, and bytes (ZooKeeper refuses requests over jute.maxbuffer, 1 MiB by default). */
export const MAX_KEYS_PER_TXN = 1_000;
const MAX_BYTES_PER_TXN = 512 * 1024;
/** Chunks of one `acquireEach` in flight at once: the rest wait, so one bulk cannot fill the session. */
const CHUNKS_IN_FLIGHT = 2;
/**
 * Refused batch transactions before going key by key. Each refusal settles at least one key (a
 * privateLock that exists) or reads every document the batch was unsure of, so a few suffice
 * unless other processes keep racing the batch.
 */
const MAX_BATCH_RETRIES = 5;

/** The children of a document this process creates (shared: nobody changes a read's children). */
const NO_CHILDREN: readonly string[] = [];

interface Candidate {
  readonly lock: DocumentLock;
  /** The document container exists (known from our cache or just read); false: create it. */
  exists: boolean;
  /** Children read before the transaction (none for a document we create). */
  children: readonly string[];
  /** Index of its privateLock create in the transaction planned last (its document's bump follows it). */
  lockOp: number;
}

/**
 * The uncontended keys of an `acquireEach` in two transactions per chunk: documents whose
 * container is not known to exist are created optimistically in one ([index container, document
 * containers, privateLocks]; an index container in one transaction only: the other chunks that
 * need it wait for that answer instead of racing it and being refused); documents with a known container are read first (pipelined) and
 * taken in the other only when nobody holds or queues for them. A refused transaction names its first
 * failing operation: an existing container → read the rest and retry; an existing privateLock →
 * that key is contended. Contended keys queue one by one (pipelined), their grants come as they
 * come.
 */
export interface BatchOptions {
  /** Single acquisitions coalesced here: their locks may linger. Not a bulk's keys (a child watch each). */
  readonly mayLinger: boolean;
  /** At most this many keys per transaction (MAX_KEYS_PER_TXN when not given). */
  readonly keysPerTransaction?: number;
}

export async function acquireInBatches(ctx: EngineContext, locks: readonly DocumentLock[], options: BatchOptions): Promise<void> {
  const chunks = chunked(locks, Math.min(options.keysPerTransaction ?? MAX_KEYS_PER_TXN, MAX_KEYS_PER_TXN));
  const workers = Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks.length) }, async () => {
    for (let chunk = chunks.shift(); chunk !== undefined; chunk = chunks.shift()) await acquireChunk(ctx, chunk, options);
  });
  await Promise.all(workers);
}

function chunked(locks: readonly DocumentLock[], keysPerTxn: number): DocumentLock[][] {
  const chunks: DocumentLock[][] = [];
  let current: DocumentLock[] = [];
  let bytes = 0;
  for (const lock of locks) {
    // Three paths a key: its container's create, its privateLock's, its document's bump.
    const size = 3 * lock.docPath.length + 420;
    if (current.length > 0 && (current.length >= keysPerTxn || bytes + size > MAX_BYTES_PER_TXN)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(lock);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

async function acquireChunk(ctx: EngineContext, locks: readonly DocumentLock[], options: BatchOptions): Promise<void> {
  const link = await ctx.connection.whenConnected(undefined, true);
  const live = locks.filter((lock) => lock.state !== 'released');
  if (live.length === 0) return;
  if (link === null) {
    // Closed, or ZooKeeper unreachable: each key takes its own way out (its waiters fail fast).
    for (const lock of live) lock.begin();
    return;
  }
  const releasesIssued = ctx.releases.issuedFor(live.map((lock) => lock.docPath));
  if (releasesIssued !== null) await releasesIssued;
  for (const lock of live) ctx.releases.flushFor(lock.docPath);
  const wanted: DocumentLock[] = [];
  const leaving: DocumentLock[] = [];
  for (const lock of live) (lock.waiting > 0 && lock.generation === link.generation ? wanted : leaving).push(lock);
  for (const lock of leaving) lock.begin();
  try {
    await ctx.containers.ensure(link.zk, lockRootNodes(ctx.root));
  } catch (error) {
    for (const lock of wanted) lock.begin();
    if (classifyFailure(error).kind === 'refused') ctx.logger.error({ err: error }, 'cannot create the lock root');
    return;
  }
  const candidates = wanted.map((lock): Candidate => ({ lock, exists: ctx.containers.isKnown(lock.docPath), children: NO_CHILDREN, lockOp: -1 }));
  // The known documents' reads go out first and their transaction follows as soon as they are
  // answered (one session answers in order): the fresh documents' transaction, issued right
  // behind the reads, waits for neither, and a known one reaped since refuses nothing of theirs.
  // The fresh grants are handed out with the known ones' answer, which comes right behind theirs
  // (a bulk then forwards one sub-bulk, not two one after the other).
  let knownAnswered = (): void => undefined;
  const knownFirstAnswer = new Promise<void>((resolve) => (knownAnswered = resolve));
  const known = readExisting(ctx, link, candidates.filter((c) => c.exists)).then((free) =>
    createInOneTransaction(ctx, link, free, options, { answered: knownAnswered }),
  );
  const fresh = createInOneTransaction(ctx, link, candidates.filter((c) => !c.exists), options, { grantAfter: knownFirstAnswer });
  await Promise.all([fresh, known.finally(knownAnswered)]);
}

/** Two transactions of one chunk whose grants are handed out together. */
interface Pairing {
  /** Called once this transaction's first attempt is answered, or when there is none. */
  readonly answered?: () => void;
  /**
   * Grants wait for this: the other transaction's first answer, already on its way (never a
   * wait for another holder: a create in a transaction is refused at once when it is taken).
   */
  readonly grantAfter?: Promise<void>;
}

/**
 * Reads documents believed to exist (every candidate given here); returns those free to take
 * (contended ones queue; one reaped since is free again, to be created).
 */
async function readExisting(ctx: EngineContext, link: Link, candidates: readonly Candidate[]): Promise<Candidate[]> {
  const reads = await Promise.allSettled(
    candidates.map((c) => {
      c.lock.queueReadSent();
      return link.zk.children(c.lock.docPath);
    }),
  );
  const free: Candidate[] = [];
  reads.forEach((read, i) => {
    const candidate = candidates[i]!;
    if (read.status === 'rejected') {
      if (isZkCode(read.reason, 'NONODE')) {
        ctx.containers.forgetPath(candidate.lock.docPath);
        candidate.exists = false;
        free.push(candidate);
      } else candidate.lock.begin();
      return;
    }
    if (takenFor(ctx, read.value.children, candidate.lock)) {
      candidate.lock.contendedInBatch();
      return;
    }
    ctx.containers.remember(candidate.lock.docPath);
    candidate.children = read.value.children;
    free.push(candidate);
  });
  return free;
}

/** privateLock held, or an entry that a newcomer of the lock's rank must wait behind. */
function takenFor(ctx: EngineContext, children: readonly string[], lock: DocumentLock): boolean {
  if (children.includes(PRIVATE_LOCK)) return true;
  const rank = lock.judgeQueueRead();
  return queueFromChildren(children, ctx.prefixes).some((entry) => rankOf(entry.prefix, ctx.prefixes) <= rank);
}

interface Plan {
  /**
   * Container creates (`mode: 'container'`) and each candidate's privateLock create (at its
   * `lockOp`) followed by its document's bump (owner-token.ts). A document created here is not remembered as existing: while it is held this
   * process reaches it through its lock, and its release deletes it or remembers it.
   */
  readonly ops: ZkOp[];
  /** The candidates, in the order of their privateLock creates. */
  readonly candidates: readonly Candidate[];
  /** Index containers this transaction creates, claimed in the cache: settle each with the answer. */
  readonly claims: Map<string, (created: boolean) => void>;
  /** The sighting of each index container known to exist, to forget if the transaction finds it gone. */
  readonly sightings: Map<string, Sighting>;
}

// A plan is made per transaction attempt for hundreds of keys: its per-key parts are the ops
// alone (no map entry, no path string: a document lock has its privateLock path already).
function planOf(ctx: EngineContext, candidates: readonly Candidate[], indexes: readonly string[]): Plan {
  const plan: Plan = { ops: [], candidates, claims: new Map(), sightings: new Map() };
  for (const path of indexes) {
    const sighting = ctx.containers.sighting(path);
    if (sighting !== undefined) {
      plan.sightings.set(path, sighting);
      continue;
    }
    // Created by this transaction unless another one on its way creates it (waited for before planning).
    const settle = ctx.containers.claim(path);
    if (settle === undefined) continue;
    plan.claims.set(path, settle);
    plan.ops.push(containerCreate(path));
  }
  for (const candidate of candidates) {
    if (!candidate.exists) plan.ops.push(containerCreate(candidate.lock.docPath));
    // A document believed to exist was read first (`readExisting`); one created here has no queue before the create.
    candidate.lock.beforeCreate(candidate.exists);
    candidate.lockOp = plan.ops.length;
    plan.ops.push({ type: 'create', path: candidate.lock.privatePath, data: candidate.lock.lockData(), mode: 'ephemeral' });
    plan.ops.push(bumpDocument(candidate.lock.docPath));
  }
  return plan;
}

function containerCreate(path: string): ZkOp {
  return { type: 'create', path, data: '', mode: 'container' };
}

/** The container the plan's op `index` creates; undefined when that op is not a container create. */
function containerAt(plan: Plan, index: number): string | undefined {
  const op = plan.ops[index];
  return op?.type === 'create' && op.mode === 'container' ? op.path : undefined;
}

/** The candidate whose privateLock create is the plan's op `index`. */
function candidateAt(plan: Plan, index: number): Candidate | undefined {
  return plan.candidates.find((candidate) => candidate.lockOp === index);
}

/** The index containers of the documents to create, each once. */
function indexesOf(ctx: EngineContext, candidates: readonly Candidate[]): string[] {
  // A bulk's keys name one index or a few: each index's path is made once, not once per key.
  const names = new Set<string>();
  for (const candidate of candidates) if (!candidate.exists) names.add(candidate.lock.key.index);
  return Array.from(names, (name) => indexPath(ctx.root, name));
}

/**
 * The creates of this chunk's index containers already on their way (in another chunk's
 * transaction, or on their own): waiting for their answers costs what the round trip of a
 * transaction refused at the same create would, without the refusal's work on the server.
 */
function indexCreatesOnTheirWay(ctx: EngineContext, indexes: readonly string[]): Promise<void>[] {
  const pending: Promise<void>[] = [];
  for (const path of indexes) {
    const creating = ctx.containers.pending(path);
    if (creating !== undefined) pending.push(creating);
  }
  return pending;
}

/** The transaction's answer settles the index containers it claimed (all or none of its ops applied). */
function settleClaims(plan: Plan, outcome: TxnOutcome | null): void {
  const createdAll = outcome?.ok === true;
  for (const [path, settle] of plan.claims) {
    const failedHere = outcome?.ok === false && containerAt(plan, outcome.failedIndex) === path;
    settle(createdAll || (failedHere && outcome.code === 'NODEEXISTS'));
  }
}

async function createInOneTransaction(ctx: EngineContext, link: Link, initial: readonly Candidate[], options: BatchOptions, pairing: Pairing = {}): Promise<void> {
  try {
    await tryTransactions(ctx, link, initial, options, pairing);
  } finally {
    pairing.answered?.();
  }
}

async function tryTransactions(ctx: EngineContext, link: Link, initial: readonly Candidate[], options: BatchOptions, pairing: Pairing): Promise<void> {
  let candidates: readonly Candidate[] = initial;
  for (let attempt = 0; ; attempt++) {
    candidates = stillWanted(candidates);
    if (candidates.length === 0) return;
    if (attempt > MAX_BATCH_RETRIES) {
      for (const c of candidates) c.lock.begin();
      return;
    }
    const indexes = indexesOf(ctx, candidates);
    const onTheirWay = indexCreatesOnTheirWay(ctx, indexes);
    // No await when none is: the transaction goes out in the same turn.
    if (onTheirWay.length > 0) await Promise.allSettled(onTheirWay);
    const plan = planOf(ctx, candidates, indexes);
    let outcome: TxnOutcome;
    try {
      outcome = await link.zk.multi(plan.ops);
      settleClaims(plan, outcome);
    } catch (error) {
      settleClaims(plan, null);
      const unknown = classifyFailure(error).kind === 'unknown';
      for (const c of candidates) {
        if (unknown) c.lock.unknownInBatch();
        else c.lock.begin();
      }
      return;
    }
    pairing.answered?.();
    if (outcome.ok) {
      await pairing.grantAfter;
      granted(ctx, plan, outcome.results, options);
      return;
    }
    ctx.events.batchRefused({ code: outcome.code });
    candidates = await afterRefusal(ctx, link, plan, outcome.failedIndex, outcome.code);
  }
}

/**
 * The candidates some request still waits for. The others (every request gave up during a read
 * or a refused attempt: a timeout, a client gone, a bulk answered) take their own way out now —
 * `begin` finds nobody waiting and leaves. Dropped silently, such a lock stayed in the engine's
 * map, neither acquiring nor leaving, and every later request here for its document waited out
 * its timeout (and then the withdrawal bound).
 */
function stillWanted(candidates: readonly Candidate[]): Candidate[] {
  const wanted: Candidate[] = [];
  for (const candidate of candidates) {
    if (candidate.lock.waiting > 0) wanted.push(candidate);
    else candidate.lock.begin();
  }
  return wanted;
}

function granted(ctx: EngineContext, plan: Plan, results: readonly TxnOpResult[], options: BatchOptions): void {
  const first = plan.candidates[0];
  if (first === undefined) return;
  // One transaction, one zxid: every node it created has that czxid. One Stat read, not one per key.
  const czxid = results[first.lockOp]?.stat?.czxid ?? 0;
  for (const candidate of plan.candidates) {
    const { exists } = candidate;
    candidate.lock.grantedInBatch(czxid, tokenOf(results[candidate.lockOp + 1]), !exists, exists ? candidate.children : NO_CHILDREN, options.mayLinger);
  }
}

/** Adjusts the candidates after a refused transaction; returns those to try again. */
async function afterRefusal(ctx: EngineContext, link: Link, plan: Plan, failedIndex: number, code: string): Promise<readonly Candidate[]> {
  const { candidates } = plan;
  const lockCandidate = candidateAt(plan, failedIndex);
  if (lockCandidate !== undefined && code === 'NONODE') {
    // Its document was reaped since we read it: create it with the others.
    ctx.containers.forgetPath(lockCandidate.lock.docPath);
    lockCandidate.exists = false;
    return candidates;
  }
  if (lockCandidate !== undefined) {
    // privateLock exists: somebody holds it; that key queues on its own.
    lockCandidate.lock.contendedInBatch();
    return candidates.filter((c) => c !== lockCandidate);
  }
  const container = containerAt(plan, failedIndex);
  if (container === undefined) {
    for (const c of candidates) c.lock.begin();
    return [];
  }
  if (code === 'NONODE') {
    // Its parent, the index container, was reaped since this process saw it: the next attempt
    // creates it first, sharing that create with every chunk refused on the same sighting.
    const index = container.slice(0, container.lastIndexOf('/'));
    const stale = plan.sightings.get(index);
    if (stale !== undefined) ctx.containers.forgetSighting(index, stale);
    return candidates;
  }
  ctx.containers.remember(container);
  if (!candidates.some((c) => c.lock.docPath === container)) return candidates;
  // A document container exists after all: read every one we were about to create.
  const sure = candidates.filter((c) => c.exists);
  const unsure = candidates.filter((c) => !c.exists);
  for (const c of unsure) c.exists = true;
  return [...sure, ...(await readExisting(ctx, link, unsure))];
}
