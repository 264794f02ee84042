import { EventEmitter } from 'node:events';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { closeOnShutdownSignal } from '../../../src/cli/signals.js';

const silent = pino({ level: 'silent' });

function signalSource() {
  const emitter = new EventEmitter();
  return {
    source: {
      on: (signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void) => emitter.on(signal, listener),
      off: (signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void) => emitter.off(signal, listener),
    },
    send: (signal: NodeJS.Signals) => emitter.emit(signal, signal),
    listeners: () => emitter.listenerCount('SIGTERM') + emitter.listenerCount('SIGINT'),
  };
}

describe('closeOnShutdownSignal', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s closes the target, then resolves 0 and removes its listeners', async (signal) => {
    const signals = signalSource();
    let closed = 0;
    const exit = closeOnShutdownSignal({ close: async () => void (closed += 1) }, signals.source, silent);
    expect(signals.listeners()).toBe(2);
    signals.send(signal);
    await expect(exit).resolves.toBe(0);
    expect(closed).toBe(1);
    expect(signals.listeners()).toBe(0);
  });

  it('a failing close resolves 1', async () => {
    const signals = signalSource();
    const exit = closeOnShutdownSignal({ close: () => Promise.reject(new Error('stuck')) }, signals.source, silent);
    signals.send('SIGTERM');
    await expect(exit).resolves.toBe(1);
  });

  it('a second signal during a slow close resolves 1 at once', async () => {
    const signals = signalSource();
    let closeCalls = 0;
    const exit = closeOnShutdownSignal({ close: () => new Promise<void>(() => void (closeCalls += 1)) }, signals.source, silent);
    signals.send('SIGTERM');
    signals.send('SIGINT');
    await expect(exit).resolves.toBe(1);
    expect(closeCalls).toBe(1);
  });
});
