/**
 * `node --import tsx bench/bulk-path-cost.ts`: the CPU per document of the bulk path's own steps
 * outside the lock engine, for one 500-document bulk with ids answered as two sub-bulks of 250 (the
 * lock engine's chunk): parsing the action lines, keying the items, grouping them by key (one pass,
 * which also yields the distinct keys), slicing the sub-bulks, reading Elasticsearch's two answers
 * and writing the merged one. Each step runs in a loop in this process, so the figures are
 * comparable with each other, not with a whole request.
 */
import { parseBulkBody, sliceBulkBody, type BulkItem } from '../src/classify/bulk-parser.js';
import { groupByKey, type KeyedBulkItem } from '../src/write/bulk-items.js';
import type { BulkItemAnswer } from '../src/write/upstream-item.js';
import { parseBulkResponse, renderBulkResponse } from '../src/write/bulk-response.js';

const DOCUMENTS = 500;
const HALF = DOCUMENTS / 2;
const REPETITIONS = 2_000;

function bulkBody(): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < DOCUMENTS; i++) lines.push(`{"index":{"_index":"bench-streams","_id":"s-${1_000_000 + i}"}}`, `{"field":"value","n":${i}}`);
  return Buffer.from(lines.join('\n') + '\n');
}

/** Elasticsearch's answer to a sub-bulk of `positions`, as the stand-in and a real cluster shape it. */
function answerOf(positions: readonly number[]): Buffer {
  const items = positions.map((i) => ({
    index: { _index: 'bench-streams', _id: `s-${1_000_000 + i}`, _version: 1, result: 'created', _shards: { total: 2, successful: 1, failed: 0 }, _seq_no: i, _primary_term: 1, status: 201 },
  }));
  return Buffer.from(JSON.stringify({ took: 3, errors: false, items }));
}

/** CPU (user + system) per document of `step`, in µs, after a warm-up of the same step. */
function cpuPerDocUs(step: () => void): number {
  for (let i = 0; i < REPETITIONS / 10; i++) step();
  const before = process.cpuUsage();
  for (let i = 0; i < REPETITIONS; i++) step();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / REPETITIONS / DOCUMENTS;
}

const body = bulkBody();
const firstHalf = Array.from({ length: HALF }, (_, i) => i);
const answers = [answerOf(firstHalf), answerOf(firstHalf.map((i) => i + HALF))];
let items: BulkItem[] = parseBulkBody(body, null);
let keyed: KeyedBulkItem[] = [];
let results = new Map<number, BulkItemAnswer>();

const steps: Record<string, () => void> = {
  'parse the action lines': () => {
    items = parseBulkBody(body, null);
  },
  'key the items': () => {
    keyed = items.map((item) => ({ item, key: item.id === null ? null : { index: item.index, id: item.id } }));
  },
  'group by key, distinct keys': () => {
    groupByKey(keyed);
  },
  'slice two sub-bulks': () => {
    sliceBulkBody(body, items.slice(0, HALF));
    sliceBulkBody(body, items.slice(HALF));
  },
  'read the two answers': () => {
    results = new Map();
    answers.forEach((answer, part) => parseBulkResponse(answer, HALF).items.forEach((result, i) => results.set(part * HALF + i, result)));
  },
  'write the merged answer': () => {
    renderBulkResponse(6, keyed.map((k) => results.get(k.item.position) ?? {}));
  },
};

let total = 0;
for (const [name, step] of Object.entries(steps)) {
  const us = cpuPerDocUs(step);
  total += us;
  console.log(`${name.padEnd(30)} ${us.toFixed(3)} µs/document`);
}
console.log(`${'all of them'.padEnd(30)} ${total.toFixed(3)} µs/document`);
