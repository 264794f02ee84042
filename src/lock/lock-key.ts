import type { LockKey } from './lock-engine.js';

/** A stable order of keys (listings). */
export function compareKeys(a: LockKey, b: LockKey): number {
  if (a.index !== b.index) return a.index < b.index ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}

export function keyString(key: LockKey): string {
  return `${key.index}/${key.id}`;
}
