#!/usr/bin/env node
// `npm run mutate -- [--sample N] [--runs R] [--seed S] [--sample-seed K] [--exclude PATHS] [--pick I[,J…]] [--real] [--list]`: mutation testing of the
// ZooKeeper lock engine (src/lock/zookeeper, src/zookeeper-client) with the simulation (test/sim/) as the
// test. Mutants are found with the TypeScript compiler's parser: a comparison flipped (`<` ↔ `<=`,
// `>` ↔ `>=`, `===` ↔ `!==`), a logical operator swapped (`&&` ↔ `||`), a boolean literal negated,
// an `if` condition negated, in every file of those folders and their sub-folders but the ones
// `--exclude` names (comma-separated: a file's path, or a folder's ending in /). `--sample N` draws N of
// them with a generator seeded by `--sample-seed` (the same sample for the same seed and list; `--pick I`
// runs the I-th of the whole list alone); each is applied alone to a copy of the sources in a temporary
// directory and the simulation runs R seeds from S on it. A mutant is killed when a seed breaks an
// invariant or the run fails; it survives otherwise. `--list` prints the mutants and stops. `--real`:
// a mutant the simulation leaves alive in a part the simulation cannot reach (the addon's path, which
// the simulated server replaces; the orphan sweep, which removes what no modelled fault leaves; the
// admin's inspection) is then given to the real-ZooKeeper tests of that part (REAL_TESTS), and is
// killed when one of them fails. Every mutant the seeds leave alive also meets the rest of the
// simulation suite `npm test` runs (SCRIPTED: the pinned seeds and the scripted scenarios, which
// set up on purpose what seeds reach rarely), and is killed when one of those fails. `--pick` takes
// a comma-separated list.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import ts from 'typescript';

const { values } = parseArgs({
  options: {
    sample: { type: 'string', default: '20' },
    runs: { type: 'string', default: '300' },
    seed: { type: 'string', default: '1' },
    pick: { type: 'string', default: '' },
    list: { type: 'boolean', default: false },
    'sample-seed': { type: 'string', default: '1' },
    exclude: { type: 'string', default: '' },
    real: { type: 'boolean', default: false },
  },
});
const root = resolve(import.meta.dirname, '..');
const print = (line) => process.stdout.write(`${line}\n`);
const DIRS = ['src/lock/zookeeper', 'src/zookeeper-client'];
/** The parts out of the simulation's reach (a file, or a folder ending in /), and the real-ZooKeeper tests that cover each. */
const REAL_TESTS = [
  ['src/zookeeper-client/', ['test/integration/zookeeper-client', 'test/sim/sim-differential.test.ts', 'test/sim/sim-differential-faults.test.ts']],
  ['src/lock/zookeeper/session/gated-zk.ts', ['test/integration/zookeeper-client', 'test/sim/sim-differential.test.ts', 'test/sim/sim-differential-faults.test.ts']],
  ['src/lock/zookeeper/recovery/orphan-sweep.ts', ['test/integration/lock/orphan-sweep.test.ts']],
  ['src/lock/zookeeper/inspect.ts', ['test/integration/admin/lock-inspection.test.ts']],
];
/** The simulation suite beside the seeded runs: pinned seeds and scenarios scripted on the simulated ZooKeeper. */
const SCRIPTED = ['test/sim/regressions.test.ts', 'test/sim/cohort-moves.test.ts', ...readdirSync(join(root, 'test/sim')).filter((name) => name.endsWith('-scenario.test.ts')).map((name) => `test/sim/${name}`)];
const FLIPS = new Map([
  [ts.SyntaxKind.LessThanToken, '<='],
  [ts.SyntaxKind.LessThanEqualsToken, '<'],
  [ts.SyntaxKind.GreaterThanToken, '>='],
  [ts.SyntaxKind.GreaterThanEqualsToken, '>'],
  [ts.SyntaxKind.EqualsEqualsEqualsToken, '!=='],
  [ts.SyntaxKind.ExclamationEqualsEqualsToken, '==='],
  [ts.SyntaxKind.AmpersandAmpersandToken, '||'],
  [ts.SyntaxKind.BarBarToken, '&&'],
]);

/** Every mutant of one file: where (character range), what it replaces, and with what. */
function mutantsOf(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const line = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node) => {
    if (ts.isBinaryExpression(node) && FLIPS.has(node.operatorToken.kind)) {
      const token = node.operatorToken;
      found.push({ file, start: token.getStart(source), end: token.getEnd(), replace: FLIPS.get(token.kind), line: line(token.getStart(source)), was: token.getText(source) });
    } else if (node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword) {
      found.push({ file, start: node.getStart(source), end: node.getEnd(), replace: node.kind === ts.SyntaxKind.TrueKeyword ? 'false' : 'true', line: line(node.getStart(source)), was: node.getText(source) });
    } else if (ts.isIfStatement(node)) {
      const condition = node.expression;
      found.push({ file, start: condition.getStart(source), end: condition.getEnd(), replace: `!(${condition.getText(source)})`, line: line(condition.getStart(source)), was: 'if (…)' });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every TypeScript file under DIRS, in their sub-folders too, less those a path of `--exclude` names (a file, or a folder ending in /). */
function sourceFiles() {
  const excluded = values.exclude.split(',').map((part) => part.trim()).filter((part) => part !== '');
  const kept = (file) => !excluded.some((part) => (part.endsWith('/') ? file.startsWith(part) : file === part));
  return DIRS.flatMap(filesUnder).filter(kept).sort();
}

/** The .ts files under `dir` (relative to the repository, with /), walked by hand: Node 20's recursive readdir may leave entries out. */
function filesUnder(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return filesUnder(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The real-ZooKeeper tests of the part `file` is in; none when the simulation reaches it. */
function testsReaching(file) {
  return REAL_TESTS.find(([part]) => (part.endsWith('/') ? file.startsWith(part) : file === part))?.[1] ?? [];
}

/** mulberry32, as the simulation's generator: one sample per sample seed. */
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const all = sourceFiles().flatMap(mutantsOf);
all.forEach((mutant, index) => (mutant.id = index));
if (values.list) {
  // Written whole and awaited: process.exit right after a write to a pipe cuts the list short.
  const lines = all.map((mutant) => `${mutant.id} ${mutant.file}:${mutant.line} ${mutant.was} -> ${mutant.replace}\n`).join('');
  await new Promise((resolve) => process.stdout.write(lines, resolve));
  process.exit(0);
}
let chosen;
if (values.pick !== '') chosen = values.pick.split(',').map((id) => all[Number(id)]).filter(Boolean);
else {
  const random = generator(Number(values['sample-seed']));
  const pool = [...all];
  chosen = [];
  while (chosen.length < Number(values.sample) && pool.length > 0) chosen.push(pool.splice(Math.floor(random() * pool.length), 1)[0]);
}
print(
  `${all.length} mutants in ${DIRS.join(', ')}${values.exclude === '' ? '' : ` (excluded: ${values.exclude})`}; running ${chosen.length}, ${values.runs} seeds each from seed ${values.seed}` +
    `${values.pick === '' ? `, sample seed ${values['sample-seed']}` : ''}`,
);
const results = [];
for (const mutant of chosen) {
  const dir = mkdtempSync(join(tmpdir(), 'sim-mutant-'));
  try {
    for (const part of ['src', 'test/sim', 'scripts/sim.mjs', 'scripts/sim-workers.mjs', 'package.json', 'tsconfig.json']) cpSync(join(root, part), join(dir, part), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const text = readFileSync(join(root, mutant.file), 'utf8');
    writeFileSync(join(dir, mutant.file), text.slice(0, mutant.start) + mutant.replace + text.slice(mutant.end));
    const run = spawnSync(process.execPath, ['scripts/sim.mjs', '--runs', values.runs, '--seed', values.seed], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      maxBuffer: 256 * 1024 * 1024,
      timeout: 20 * 60 * 1000,
    });
    const output = `${run.stdout}${run.stderr}`;
    const seeds = [...output.matchAll(/^seed (\d+) \(/gm)].map((match) => Number(match[1]));
    const firstSeed = seeds.length > 0 ? Math.min(...seeds) : null;
    const invariant = firstSeed === null ? '' : (/^\s+t=\d+ ([^\n]*)/m.exec(output.slice(output.indexOf(`seed ${firstSeed} (`)))?.[1] ?? '');
    let killed = run.status !== 0;
    let killedBy = killed ? 'simulation' : '';
    const vitest = (files) =>
      spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...files], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
        maxBuffer: 256 * 1024 * 1024,
        timeout: 10 * 60 * 1000,
      });
    const failedTests = (test) => /^tests: [^\n]*/m.exec(`${test.stdout}${test.stderr}`)?.[0] ?? `exit ${test.status}`;
    if (!killed) {
      for (const part of ['test', 'vitest.config.ts']) cpSync(join(root, part), join(dir, part), { recursive: true, force: true });
      symlinkSync(join(root, 'native'), join(dir, 'native'));
      const scripted = vitest(SCRIPTED);
      if (scripted.status !== 0) {
        killed = true;
        killedBy = `scripted simulations (${failedTests(scripted)})`;
      }
    }
    const realTests = values.real && !killed ? testsReaching(mutant.file) : [];
    if (realTests.length > 0) {
      const real = vitest(realTests);
      if (real.status !== 0) {
        killed = true;
        killedBy = `real ZooKeeper tests (${failedTests(real)})`;
      }
    }
    const row = {
      id: mutant.id,
      where: `${mutant.file}:${mutant.line}`,
      mutation: `${mutant.was} -> ${mutant.replace}`,
      killed,
      killedBy,
      firstSeed,
      invariant: killed && firstSeed === null && killedBy === 'simulation' ? 'the run failed (an error, not an invariant)' : invariant,
    };
    results.push(row);
    print(JSON.stringify(row));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const killed = results.filter((row) => row.killed).length;
print(`\nkilled ${killed} of ${results.length} sampled mutants (${results.length === 0 ? 0 : Math.round((100 * killed) / results.length)} %); survivors:`);
for (const row of results.filter((candidate) => !candidate.killed)) print(`  ${row.id} ${row.where} ${row.mutation}`);
