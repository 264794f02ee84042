import { readFileSync, writeFileSync } from 'node:fs';
import { withConfigReference } from '../src/config/config-reference.js';

// Regenerates the configuration table of docs/configuration.md from the key registry, so the two cannot drift.
const DOCUMENT = 'docs/configuration.md';
const text = readFileSync(DOCUMENT, 'utf8');
const updated = withConfigReference(text);
if (updated === null) throw new Error(`${DOCUMENT} has no config-reference markers`);
writeFileSync(DOCUMENT, updated);
