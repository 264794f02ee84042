#!/usr/bin/env node
// `node scripts/sim-breaks.mjs [--runs N] [--only TEXT]`: shows that the simulation (test/sim/) catches real
// mistakes in the lock engine. Each deliberate break is applied alone to a copy of the sources
// in a temporary directory (never to src/), the seeded runs of `npm test`'s budget are run on
// it, and the first failing seed and the invariant it broke are reported.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const BREAKS = [
  {
    name: 'forced-release epoch check removed from releases',
    file: 'src/lock/zookeeper/ownership/release-item.ts',
    find: "      if (!this.epochsChecked.has(privateLock.epoch)) {\n        this.epochsChecked.add(privateLock.epoch);\n        this.push(pending, epoch.checkOp(privateLock.epoch), 'epoch');\n      }\n",
    replace: '',
  },
  {
    name: 'privateLock released at the safety margin instead of kept',
    file: 'src/lock/zookeeper/ownership/cohort-ownership.ts',
    find: "if (this.core.generation <= generation) this.toLost('ZooKeeper connection suspended past the safety margin');",
    replace: "if (this.core.generation <= generation) {\n      this.toLost('ZooKeeper connection suspended past the safety margin');\n      void this.giveBack('dropLost');\n    }",
  },
  {
    name: 'hand-over check skipped (a lost lock passed on locally)',
    file: 'src/lock/zookeeper/cohort/local-cohort.ts',
    find: "    if (state === 'lost') return this.host.giveBack('dropLost');\n",
    replace: '',
  },
  {
    name: 'recovery after a lost reply skipped (queue again instead)',
    file: 'src/lock/zookeeper/queue/cohort-queue-loop.ts',
    find: "      if (failure.kind === 'unknown') void this.core.ctx.orphans.sweep();\n      return 'recover';",
    replace: "      this.core.nodes.outcomeSettled();\n      if (failure.kind === 'unknown') void this.core.ctx.orphans.sweep();\n      return 'enterQueue';",
  },
  {
    name: "fast path ignores the queue it read (jumps other processes' waiters)",
    file: 'src/lock/zookeeper/queue/fast-path.ts',
    find: 'const preceded = queueFromChildren(children.value.children, prefixes).some((entry) => rankOf(entry.prefix, prefixes) <= plan.rank);',
    replace: 'const preceded = false;',
  },
  {
    name: "recovery keeps privateLock by an old entry's place (passes another process's waiter it read)",
    file: 'src/lock/zookeeper/cohort-decisions.ts',
    find: 'const view = entry === null || input.entryRank < rank ? null : viewQueue(children, entry, prefixes);',
    replace: 'const view = entry === null ? null : viewQueue(children, entry, prefixes);',
  },
  {
    name: "release fused with the next acquisition past another process's waiter",
    file: 'src/lock/zookeeper/queue/fast-path.ts',
    find: 'const others = children.value.children.filter((child) => child !== release.entry);',
    replace: 'const others: string[] = [];',
  },
  {
    name: 'local hand-over bound off by one (one pass more than the count)',
    file: 'src/lock/zookeeper/cohort/handover-policy.ts',
    find: 'if (input.handOvers >= bounds.maxCount || input.msInWindow >= bounds.maxMs) return',
    replace: 'if (input.handOvers > bounds.maxCount || input.msInWindow >= bounds.maxMs) return',
  },
  {
    name: 'hand-over time bound dropped (count only)',
    file: 'src/lock/zookeeper/cohort/handover-policy.ts',
    find: 'if (input.handOvers >= bounds.maxCount || input.msInWindow >= bounds.maxMs) return',
    replace: 'if (input.handOvers >= bounds.maxCount) return',
  },
  {
    name: "fast path ignores same-rank entries (jumps waiters of its own priority)",
    file: 'src/lock/zookeeper/queue/fast-path.ts',
    find: 'const preceded = queueFromChildren(children.value.children, prefixes).some((entry) => rankOf(entry.prefix, prefixes) <= plan.rank);',
    replace: 'const preceded = queueFromChildren(children.value.children, prefixes).some((entry) => rankOf(entry.prefix, prefixes) < plan.rank);',
  },
  {
    name: 'queue order compares sequences without undoing the wrap',
    file: 'src/lock/queue-order.ts',
    find: 'const wrapped = entries.some((e) => e.sequence >= TWO_POW_30) && entries.some((e) => e.sequence < -TWO_POW_30);',
    replace: 'const wrapped = entries.length < 0;',
  },
  {
    name: 'holder watch ignores its privateLock deleted by hand',
    file: 'src/lock/zookeeper/ownership/holder-watch.ts',
    find: "        if (type === 'deleted') this.wentAway();\n",
    replace: "        if (type === 'deleted') return;\n",
  },
  {
    name: 'lingering lock kept when another process queues',
    file: 'src/lock/zookeeper/cohort/local-cohort.ts',
    find: "    if (this.core.state === 'idle' && !this.nobodyElseQueued()) void this.host.giveBack('lingerEnded');\n",
    replace: '',
  },
  {
    name: 'session expiry not reported to the engine',
    file: 'src/lock/zookeeper/session/session.ts',
    find: '    this.events.expired(generation);\n',
    replace: '',
  },
  {
    name: 'last withdrawal does not wake the queue loop (its entry stays)',
    file: 'src/lock/zookeeper/cohort/local-cohort.ts',
    find: "    // The last request here gave up: the loop leaves the queue; the caller may wait for that.\n    this.host.wake('poked');\n",
    replace: '',
  },
  {
    name: 'placeNeedsFreshQueue always false',
    file: 'src/lock/zookeeper/cohort/local-cohort.ts',
    find: '    return mustReadQueueAgain(this.waiters.peek(), this.placingRead);',
    replace: '    return false;',
  },
  {
    name: 'a background request served on a read made for a foreground one without reading again',
    file: 'src/lock/zookeeper/cohort-decisions.ts',
    find: "  return next.arrival > read.arrivals || read.priority === 'foreground';",
    replace: '  return next.arrival > read.arrivals;',
  },
  {
    name: 'an entry of ours the read no longer lists keeps its place',
    file: 'src/lock/zookeeper/cohort-decisions.ts',
    find: '    view !== null && view.position >= 0',
    replace: '    view !== null',
  },
  {
    name: 'safety margin skips the current generation',
    file: 'src/lock/zookeeper/ownership/cohort-ownership.ts',
    find: 'if (this.core.generation <= generation) this.toLost(',
    replace: 'if (this.core.generation < generation) this.toLost(',
  },
  {
    name: 'queue entry re-ranked up, never back down',
    file: 'src/lock/zookeeper/queue/cohort-queue-loop.ts',
    find: "if (this.cohort.bestRank() !== nodes.entryRank) return 'rerank';",
    replace: "if (this.cohort.bestRank() < nodes.entryRank) return 'rerank';",
  },
  {
    // The read and the owner check each keep the yield from deleting the next holder's privateLock: the break takes both.
    name: 'yield of a lock no holder watch guards deletes privateLock by name unread and unchecked',
    file: 'src/lock/zookeeper/ownership/cohort-ownership.ts',
    find: "      if (!this.privateLockWatched() && !(await this.privateLockStillOurs(link))) {\n        nodes.privateLockWent(true);\n        core.apply('requeueRefused');\n        return this.giveBack('dropLost');\n      }\n      const outcome = await link.zk.multi([\n        { type: 'create', path: `${core.docPath}/${prefixOfRank(rank, core)}-`, data: this.cohort.nodeData(), mode: 'ephemeralSequential' },\n        { type: 'check', path: core.docPath, version: nodes.token },\n",
    replace: "      const outcome = await link.zk.multi([\n        { type: 'create', path: `${core.docPath}/${prefixOfRank(rank, core)}-`, data: this.cohort.nodeData(), mode: 'ephemeralSequential' },\n        { type: 'check', path: core.docPath, version: -1 },\n",
  },
  {
    name: "a bulk key's lock handed on locally is not watched",
    file: 'src/lock/zookeeper/cohort/local-cohort.ts',
    find: '    if (local || member.group.single) this.host.watchHandedOnLock();\n',
    replace: '    if (!local && member.group.single) this.host.watchHandedOnLock();\n',
  },
];

const { values } = parseArgs({ options: { runs: { type: 'string', default: '2000' }, seed: { type: 'string', default: '1' }, only: { type: 'string', default: '' } } });
const root = resolve(import.meta.dirname, '..');
const print = (line) => process.stdout.write(`${line}\n`);
const fail = (message) => {
  process.stderr.write(`sim-breaks: ${message}\n`);
  process.exit(2);
};
// Every break must still say something about today's engine: a target found zero times (the code
// moved) or twice (ambiguous) would make its row measure nothing. Checked for all of them before any
// run, so a stale one stops the script at once rather than after the others' minutes of runs.
const stale = BREAKS.flatMap((item) => {
  let text;
  try {
    text = readFileSync(join(root, item.file), 'utf8');
  } catch {
    return [`"${item.name}": ${item.file} does not exist`];
  }
  const found = text.split(item.find).length - 1;
  return found === 1 ? [] : [`"${item.name}": its find text occurs ${found} times in ${item.file}, not exactly once`];
});
if (stale.length > 0) fail(`${stale.length} break(s) do not match the engine:\n  ${stale.join('\n  ')}`);
const selected = BREAKS.filter((candidate) => candidate.name.includes(values.only));
if (selected.length === 0) fail(`no break's name contains "${values.only}"`);
const rows = [];
for (const item of selected) {
  const dir = mkdtempSync(join(tmpdir(), 'sim-break-'));
  try {
    for (const part of ['src', 'test/sim', 'scripts/sim.mjs', 'scripts/sim-workers.mjs', 'package.json', 'tsconfig.json']) cpSync(join(root, part), join(dir, part), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const path = join(dir, item.file);
    const text = readFileSync(path, 'utf8');
    if (text.split(item.find).length !== 2) {
      rmSync(dir, { recursive: true, force: true });
      fail(`break "${item.name}": its find text is not found exactly once in ${item.file}`);
    }
    writeFileSync(path, text.replace(item.find, item.replace));
    const started = Date.now();
    const run = spawnSync(process.execPath, ['scripts/sim.mjs', '--runs', values.runs, '--seed', values.seed], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      maxBuffer: 256 * 1024 * 1024,
    });
    const output = run.stdout + run.stderr;
    const seeds = [...output.matchAll(/^seed (\d+) \(/gm)].map((match) => Number(match[1]));
    const firstSeed = seeds.length > 0 ? Math.min(...seeds) : null;
    const firstBlock = firstSeed === null ? '' : output.slice(output.indexOf(`seed ${firstSeed} (`));
    const invariant = /^\s+t=\d+ ([^\n]*)/m.exec(firstBlock)?.[1] ?? '';
    // A run that failed without naming a seed failed for another reason (the broken copy did not
    // load, say): it caught nothing, and its output says why.
    // The engine asking its transition table for a move it does not have throws from a promise
    // nobody awaits, which ends the worker before any seed is reported: `npm test` fails on it, so
    // the break is caught, by the table's own check rather than an invariant of the ledger.
    const thrown = firstSeed === null && run.status !== 0 ? (/^\s*(IllegalCohortTransition: [^\n]*)/m.exec(output)?.[1] ?? null) : null;
    if (firstSeed === null && thrown === null && run.status !== 0) process.stderr.write(`break "${item.name}": the simulation failed without a violation:\n${output.slice(-4000)}\n`);
    const row = {
      break: item.name,
      caught: firstSeed !== null || thrown !== null,
      failingSeeds: new Set(seeds).size,
      firstSeed,
      invariant: thrown === null ? invariant : `the engine threw (the run stopped): ${thrown}`,
      seconds: Math.round((Date.now() - started) / 1000),
    };
    rows.push(row);
    print(JSON.stringify(row));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
print(`\n| break | caught in ${values.runs} runs | failing seeds | first seed | invariant (first violation) |`);
print('|---|---|---|---|---|');
for (const row of rows) print(`| ${row.break} | ${row.caught ? 'yes' : 'NO'} | ${row.failingSeeds} | ${row.firstSeed ?? '-'} | ${row.invariant.replace(/\|/g, '\\|')} |`);
process.exit(rows.every((row) => row.caught) ? 0 : 1);
