import { defineConfig } from 'vitest/config';

/**
 * Two groups: the bulk of the suite runs files in parallel; the fault, soak, benchmark-smoke and
 * packed-install files run afterwards, one at a time. They kill ZooKeeper servers, freeze sessions
 * for a couple of seconds and count timings against session timeouts, which a CPU shared with
 * other test files would distort on a 2-core machine (and the install test compiles).
 */
const SEQUENTIAL = ['test/integration/faults/**/*.test.ts', 'test/integration/bench/**/*.test.ts', 'test/integration/install/**/*.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/support/zookeeper-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: SEQUENTIAL, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'faults', include: SEQUENTIAL, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
