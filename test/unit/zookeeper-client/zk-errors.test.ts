import { describe, expect, it } from 'vitest';
import { toZkError } from '../../../src/zookeeper-client/zk-errors.js';

describe('ZooKeeper rc parsing', () => {
  it.each([
    ['-110 node exists', 'NODEEXISTS'],
    ['-101 no node', 'NONODE'],
    ['-4 connection loss', 'CONNECTIONLOSS'],
    ['-112 session expired', 'SESSIONEXPIRED'],
    ['fn: "a_create" args: "/x" result: "ZINVALIDSTATE -9"', 'INVALIDSTATE'],
    ['something else entirely', 'SYSTEMERROR'],
  ])('maps %s to %s', (message, code) => {
    expect(toZkError(new Error(message)).code).toBe(code);
  });

  it('classifies connection loss and gone sessions', () => {
    expect(toZkError(new Error('-4 connection loss')).connectionLost).toBe(true);
    expect(toZkError(new Error('-112 session expired')).sessionGone).toBe(true);
    expect(toZkError(new Error('-2 run time inconsistency')).connectionLost).toBe(true);
    expect(toZkError(new Error('-110 node exists')).connectionLost).toBe(false);
  });

  it('tells answers that leave a request\'s outcome unknown from those that settle it', () => {
    const unknown = ['-4 connection loss', '-7 operation timeout', '-2 run time inconsistency', '-1 system error', '-118 session moved', '-5 marshalling error'];
    const settled = ['-110 node exists', '-101 no node', '-103 bad version', '-112 session expired', '-127 throttled', '-8 bad arguments', '-6 unimplemented', '-9 invalid state'];
    expect(unknown.map((text) => toZkError(new Error(text)).outcomeUnknown)).toEqual(unknown.map(() => true));
    expect(settled.map((text) => toZkError(new Error(text)).outcomeUnknown)).toEqual(settled.map(() => false));
  });
});
