import { writeBenchDocs } from '../bench/docs/bench-docs.js';

// Regenerates docs/benchmarks.md, its charts and the README's headline figures from
// bench/results/latest.json (adding that run to history.csv if it is new); `npm run bench` runs the same.
const changed = writeBenchDocs(process.cwd());
process.stdout.write(`${changed.length === 0 ? 'benchmark docs are current' : `updated: ${changed.join(', ')}`}\n`);
