#!/usr/bin/env node
// `npm run sim -- --runs N --seed S [--trace] [--digest FILE]`: runs seeds S … S+N-1 of the lock
// engine's simulation (test/sim/) and prints every violation with its seed and trace. --trace
// prints a failing run's whole trace instead of its last 60 events. --digest appends one line per
// seed, `seed sha1-of-its-trace`, to FILE: two engine versions compared seed by seed. --coverage
// prints how many seeds made each move of the document lock's transition table (and its rare paths).
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

function usage(message) {
  console.error(`${message}\nusage: npm run sim -- --runs N --seed S [--trace] [--coverage] [--digest FILE]`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({ options: { runs: { type: 'string', default: '1000' }, seed: { type: 'string', default: '1' }, trace: { type: 'boolean', default: false }, coverage: { type: 'boolean', default: false }, digest: { type: 'string', default: '' } } }));
} catch (error) {
  usage(error.message);
}
if (!/^[1-9]\d*$/.test(values.runs)) usage(`--runs must be a positive integer, got "${values.runs}"`);
if (!/^\d+$/.test(values.seed)) usage(`--seed must be a non-negative integer, got "${values.seed}"`);

const result = spawnSync('npx', ['vitest', 'run', '--config', 'test/sim/vitest.sim.config.ts'], {
  stdio: 'inherit',
  env: { ...process.env, SIM_RUNS: values.runs, SIM_SEED: values.seed, SIM_TRACE: values.trace ? '1' : '0', SIM_COVERAGE: values.coverage ? '1' : '0', SIM_DIGEST: values.digest === '' ? '' : resolve(values.digest) },
});
process.exit(result.status ?? 1);
