import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runLoad } from '../../../bench/load.js';

/** A server answering each request after `holdMs`, counting the most requests it held at once. */
function holdingServer(holdMs: number): { server: Server; peak: () => number; arrived: () => number } {
  let inFlight = 0;
  let peak = 0;
  let arrived = 0;
  const server = createServer((req, res) => {
    arrived++;
    inFlight++;
    peak = Math.max(peak, inFlight);
    req.resume();
    setTimeout(() => {
      inFlight--;
      res.end('{}');
    }, holdMs);
  });
  return { server, peak: () => peak, arrived: () => arrived };
}

describe('the bench load at a fixed rate (open loop)', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.close();
  });

  it('sends at an even pace rather than a burst per connection at the start of each second', async () => {
    const target = holdingServer(2);
    server = target.server;
    await new Promise<void>((resolve) => target.server.listen(0, '127.0.0.1', resolve));
    const { port } = target.server.address() as AddressInfo;
    const result = await runLoad({
      baseUrl: `http://127.0.0.1:${port}`,
      connections: 16,
      durationS: 1,
      method: 'PUT',
      pathFor: () => '/i/_doc/1',
      body: () => '{}',
      overallRate: 100,
    });
    // 100/s for 1 s: one request every 10 ms, each held 2 ms. autocannon's overallRate sends
    // each connection's share back to back at the start of the second: 16 held at once, and
    // 120 sent. The bounds leave room for a busy machine, where a stalled event loop sends the
    // requests that fell due meanwhile together (and ones due past the end not at all).
    expect(result.ok).toBeGreaterThanOrEqual(50);
    expect(target.arrived()).toBeLessThanOrEqual(101);
    expect(target.peak()).toBeLessThanOrEqual(8);
  });
});
