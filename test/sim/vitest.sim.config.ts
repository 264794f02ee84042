import { defineConfig } from 'vitest/config';

/** `npm run sim`: the simulation command alone (no ZooKeeper server: the simulated one). */
export default defineConfig({
  test: {
    include: ['test/sim/*.sim.ts'],
    pool: 'forks',
    reporters: ['default'],
  },
});
