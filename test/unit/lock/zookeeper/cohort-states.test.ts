import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  COHORT_STATES,
  type CohortEvent,
  type CohortState,
  IllegalCohortTransition,
  TRANSITIONS,
  nextTransition,
  transitionOf,
} from '../../../../src/lock/zookeeper/cohort-states.js';

const PROTOCOL_DOC = fileURLToPath(new URL('../../../../docs/lock-protocol.md', import.meta.url));

/** Runs `events` from `from` through the table alone, as the document lock does: the states it passes. */
function drive(from: CohortState, events: readonly CohortEvent[]): CohortState[] {
  const states = [from];
  let state = from;
  for (const event of events) {
    state = nextTransition(state, event).to;
    states.push(state);
  }
  return states;
}

function reachableFrom(start: CohortState): Set<CohortState> {
  const seen = new Set<CohortState>([start]);
  const todo = [start];
  for (let state = todo.pop(); state !== undefined; state = todo.pop()) {
    for (const transition of TRANSITIONS) {
      if (transition.from !== state || seen.has(transition.to)) continue;
      seen.add(transition.to);
      todo.push(transition.to);
    }
  }
  return seen;
}

/** The `from --> to` pairs of the Mermaid state diagram in docs/lock-protocol.md (the start and end markers left out). */
function diagramPairs(): Set<string> {
  const doc = readFileSync(PROTOCOL_DOC, 'utf8');
  const block = /```mermaid\nstateDiagram-v2\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/lock-protocol.md has no Mermaid state diagram');
  const pairs = new Set<string>();
  for (const match of block.matchAll(/^\s*(\S+) --> (\S+?):/gm)) {
    if (match[1] !== '[*]' && match[2] !== '[*]') pairs.add(`${match[1]} --> ${match[2]}`);
  }
  return pairs;
}

describe('the document lock transition table', () => {
  it('serves a request by the fast path, lingers, hands over and releases', () => {
    expect(drive('fastPath', ['tryFastPath', 'grant', 'linger', 'resume', 'linger', 'lingerEnded', 'finish', 'end'])).toEqual([
      'fastPath',
      'fastPath',
      'held',
      'idle',
      'held',
      'idle',
      'held',
      'releasing',
      'released',
    ]);
  });

  it('queues, arbitrates, yields to another process and queues again', () => {
    expect(drive('fastPath', ['enterQueue', 'evaluate', 'arbitrate', 'grant', 'requeue', 'evaluate', 'arbitrate', 'grant'])).toEqual([
      'fastPath',
      'queued',
      'queued',
      'arbitrating',
      'held',
      'yielding',
      'queued',
      'arbitrating',
      'held',
    ]);
  });

  it('recovers after a lost reply from any step that sends, and goes on by what it found', () => {
    for (const from of ['fastPath', 'queued', 'arbitrating', 'recovering', 'yielding'] as const) {
      expect(nextTransition(from, 'recover').to).toBe('recovering');
    }
    expect(transitionOf('recovering', 'grant')?.to).toBe('held');
    expect(transitionOf('recovering', 'evaluate')?.to).toBe('queued');
    expect(transitionOf('recovering', 'tryFastPath')?.to).toBe('fastPath');
    expect(transitionOf('held', 'recover')).toBeUndefined();
  });

  it('loses only a lock it vouches for, and never hands a lost lock over', () => {
    expect(transitionOf('held', 'lose')?.to).toBe('lost');
    expect(transitionOf('idle', 'lose')).toMatchObject({ to: 'lost', effects: ['stopLingerTimer'] });
    for (const state of COHORT_STATES.filter((s) => s !== 'held' && s !== 'idle')) expect(transitionOf(state, 'lose')).toBeUndefined();
    const fromLost = TRANSITIONS.filter((transition) => transition.from === 'lost').map((transition) => transition.to);
    expect(new Set(fromLost)).toEqual(new Set(['releasing', 'released']));
    expect(transitionOf('yielding', 'requeueRefused')?.to).toBe('lost');
  });

  it('starts a new incarnation at each grant and each re-queue, and ends lingering with its timer', () => {
    expect(nextTransition('arbitrating', 'grant').effects).toEqual(['newIncarnation']);
    expect(nextTransition('held', 'requeue').effects).toEqual(['newIncarnation']);
    for (const event of ['resume', 'lingerEnded'] as const) expect(nextTransition('idle', event).effects).toEqual(['stopLingerTimer']);
    for (const state of COHORT_STATES) expect(nextTransition(state, 'end')).toMatchObject({ to: 'released', effects: ['stopLingerTimer', 'resolveFinished'] });
  });

  it('refuses a move it does not have, naming the state and the event', () => {
    expect(() => nextTransition('queued', 'linger')).toThrow(IllegalCohortTransition);
    expect(() => nextTransition('queued', 'linger')).toThrow(expect.objectContaining({ code: 'INTERNAL', meta: { from: 'queued', event: 'linger' } }));
    expect(() => nextTransition('released', 'arbitrate')).toThrow('no transition for "arbitrate" in state "released"');
    expect(transitionOf('idle', 'finish')).toBeUndefined();
  });

  it('has one move per state and event, reaches every state from the start and ends from every state', () => {
    const keys = TRANSITIONS.map((transition) => `${transition.from} ${transition.event}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(reachableFrom('fastPath')).toEqual(new Set(COHORT_STATES));
    for (const state of COHORT_STATES) expect(reachableFrom(state).has('released')).toBe(true);
  });

  it('is the state diagram of docs/lock-protocol.md, move for move (a session end from any state is said in words)', () => {
    const table = new Set(TRANSITIONS.filter((transition) => transition.event !== 'end' || transition.from === 'releasing').map((t) => `${t.from} --> ${t.to}`));
    expect([...diagramPairs()].sort()).toEqual([...table].sort());
  });
});
