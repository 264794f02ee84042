import { afterEach } from 'vitest';
import { MemoryLockEngine } from '../../../../src/lock/memory/memory-lock-engine.js';
import { runLockEngineSuite } from '../lock-engine-suite.js';

let engines: MemoryLockEngine[] = [];
let shared: MemoryLockEngine | null = null;
let counter = 0;

afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
  shared = null;
});

runLockEngineSuite({
  name: 'in-memory',
  async engines(count) {
    // One process, one engine: every "instance" is the same engine. `close` tests ask for a
    // separate one (count 1 after the shared one exists) so they can close it alone.
    if (shared === null) {
      shared = new MemoryLockEngine();
      engines.push(shared);
      return Array.from({ length: count }, () => shared!);
    }
    const own = new MemoryLockEngine();
    engines.push(own);
    return Array.from({ length: count }, () => own);
  },
  index: () => `memory-${++counter}`,
});
