import type { Priority } from './lock-engine.js';

/**
 * Queue entries are `<prefix>-<seq>` where ZooKeeper formats the parent's signed 32-bit child
 * counter with `%010d`: `A-0000000042`, and after the wrap `A--2147483648` / `A--000000005`.
 * Order is (priority prefix, sequence), with the sequence compared after undoing a wrap, so a
 * counter crossing 2^31 never moves a newcomer ahead of older entries (kazoo#730, ZOOKEEPER-2944).
 */
export interface QueueEntry {
  readonly name: string;
  readonly prefix: string;
  readonly sequence: number;
}

const ENTRY_NAME = /^(.+?)-(\d{10}|-\d{9,10})$/;
const TWO_POW_30 = 2 ** 30;
const TWO_POW_32 = 2 ** 32;

export function parseEntryName(name: string): QueueEntry | null {
  const match = ENTRY_NAME.exec(name);
  if (match === null || match[1] === undefined || match[2] === undefined) return null;
  const sequence = Number.parseInt(match[2], 10);
  if (sequence > 2 ** 31 - 1 || sequence < -(2 ** 31)) return null;
  return { name, prefix: match[1], sequence };
}

export interface PrefixRanks {
  readonly foreground: string;
  readonly background: string;
}

export function prefixFor(priority: Priority, prefixes: PrefixRanks): string {
  return priority === 'foreground' ? prefixes.foreground : prefixes.background;
}

export function priorityOfPrefix(prefix: string, prefixes: PrefixRanks): Priority {
  return prefix === prefixes.foreground ? 'foreground' : 'background';
}

/** 0 foreground, 1 background, 2 any other prefix (served last, by name). */
export function rankOf(prefix: string, prefixes: PrefixRanks): number {
  if (prefix === prefixes.foreground) return 0;
  if (prefix === prefixes.background) return 1;
  return 2;
}

/**
 * Entries of one queue in service order. Live entries of one parent span far less than 2^31
 * sequence numbers, so if the set holds both very large positive and very negative numbers the
 * counter wrapped between them and the negative ones are the newer ones.
 */
export function orderQueue(entries: readonly QueueEntry[], prefixes: PrefixRanks): QueueEntry[] {
  const wrapped = entries.some((e) => e.sequence >= TWO_POW_30) && entries.some((e) => e.sequence < -TWO_POW_30);
  const unwrapped = (e: QueueEntry): number => (wrapped && e.sequence < 0 ? e.sequence + TWO_POW_32 : e.sequence);
  return [...entries].sort((a, b) => {
    const byRank = rankOf(a.prefix, prefixes) - rankOf(b.prefix, prefixes);
    if (byRank !== 0) return byRank;
    if (a.prefix !== b.prefix) return a.prefix < b.prefix ? -1 : 1;
    return unwrapped(a) - unwrapped(b);
  });
}

/** Parses and orders a `getChildren` answer, ignoring `privateLock` and foreign names. */
export function queueFromChildren(children: readonly string[], prefixes: PrefixRanks): QueueEntry[] {
  const entries: QueueEntry[] = [];
  for (const child of children) {
    const entry = parseEntryName(child);
    if (entry !== null) entries.push(entry);
  }
  return orderQueue(entries, prefixes);
}
