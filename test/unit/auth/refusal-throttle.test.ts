import { once } from 'node:events';
import { createServer, connect, type Socket } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RefusalThrottleSettings } from '../../../src/auth/auth-settings.js';
import { HeldRefusals } from '../../../src/auth/refusal-delay.js';
import { AT_ONCE, RefusalThrottle, treatmentOf } from '../../../src/auth/refusal-throttle.js';

const SETTINGS: RefusalThrottleSettings = { delayAfter: 3, delayMs: 100, delayMaxMs: 2000, closeAfter: 20 };

const settingsArbitrary = fc.record({
  delayAfter: fc.integer({ min: 0, max: 50 }),
  delayMs: fc.integer({ min: 1, max: 10_000 }),
  delayMaxMs: fc.integer({ min: 0, max: 100_000 }),
  closeAfter: fc.integer({ min: 0, max: 50 }),
});

describe('treatmentOf: the n-th credential refusal in a row on one connection', () => {
  it('answers the first delayAfter at once, then doubles from delayMs up to delayMaxMs, and closes from closeAfter on', () => {
    const delays = Array.from({ length: 10 }, (_, n) => treatmentOf(n + 1, SETTINGS).delayMs);
    expect(delays).toEqual([0, 0, 0, 100, 200, 400, 800, 1600, 2000, 2000]);
    expect(treatmentOf(19, SETTINGS).close).toBe(false);
    expect(treatmentOf(20, SETTINGS)).toEqual({ delayMs: 2000, close: true });
  });

  it('never delays past the cap, never shortens a delay as the run grows, and delayMaxMs=0 or closeAfter=0 turn each part off', () => {
    fc.assert(
      fc.property(settingsArbitrary, fc.integer({ min: 1, max: 10_000 }), (settings, streak) => {
        const now = treatmentOf(streak, settings);
        const next = treatmentOf(streak + 1, settings);
        expect(now.delayMs).toBeLessThanOrEqual(settings.delayMaxMs);
        expect(next.delayMs).toBeGreaterThanOrEqual(now.delayMs);
        if (streak <= settings.delayAfter || settings.delayMaxMs === 0) expect(now.delayMs).toBe(0);
        expect(now.close).toBe(settings.closeAfter > 0 && streak >= settings.closeAfter);
      }),
    );
  });

  it('counts per connection, and an accepted write ends the run', () => {
    const throttled: unknown[] = [];
    const throttle = new RefusalThrottle(() => ({ ...SETTINGS, delayAfter: 1 }), { throttled: (treatment) => throttled.push(treatment) });
    const one = {};
    const other = {};
    expect(throttle.refused(one)).toBe(AT_ONCE);
    expect(throttle.refused(one).delayMs).toBe(100);
    expect(throttle.refused(other)).toBe(AT_ONCE);
    throttle.accepted(one);
    expect(throttle.refused(one)).toBe(AT_ONCE);
    expect(throttle.refused(undefined)).toBe(AT_ONCE);
    expect(throttled).toEqual([{ delayMs: 100, close: false }]);
  });
});

/** A loopback connection as the server side sees it, and a way to close both ends and the server. */
async function acceptedSocket(): Promise<{ readonly socket: Socket; close(): void }> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const client = connect(port, '127.0.0.1');
  const [socket] = await accepted;
  return {
    socket,
    close: () => {
      client.destroy();
      socket.destroy();
      server.close();
    },
  };
}

describe('HeldRefusals: a held refusal pauses its connection’s reading', () => {
  it('pauses the socket while held, resumes it when released; shutdown releases every hold', async () => {
    const { socket, close } = await acceptedSocket();
    try {
      const held = new HeldRefusals();
      let released = false;
      const hold = held.hold(socket, 60_000).then(() => (released = true));
      expect(socket.isPaused()).toBe(true);
      expect(held.size).toBe(1);
      held.releaseAll();
      await hold;
      expect(released).toBe(true);
      expect(socket.isPaused()).toBe(false);
      expect(held.size).toBe(0);
      await held.hold(socket, 60_000);
      expect(socket.isPaused()).toBe(false);
    } finally {
      close();
    }
  });

  it('holds the refusals of one connection together: paused once, read again when the last is answered', async () => {
    const { socket, close } = await acceptedSocket();
    try {
      const held = new HeldRefusals();
      const closeListeners = socket.listenerCount('close');
      const short = held.hold(socket, 1);
      const long = held.hold(socket, 60_000);
      expect(held.size).toBe(2);
      expect(socket.listenerCount('close')).toBe(closeListeners + 1);
      await short;
      expect(socket.isPaused()).toBe(true);
      socket.destroy();
      await long;
      expect(held.size).toBe(0);
    } finally {
      close();
    }
  });
});
