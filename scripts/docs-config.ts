import { readFileSync, writeFileSync } from 'node:fs';
import { withConfigReference } from '../src/config/config-reference.js';

// Regenerates the README's configuration table from the key registry, so the two cannot drift.
const readme = readFileSync('README.md', 'utf8');
const updated = withConfigReference(readme);
if (updated === null) throw new Error('README.md has no config-reference markers');
writeFileSync('README.md', updated);
