import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClientGone } from '../../../src/http/client-gone.js';

/** A server that hands each exchange to `onExchange`; the test decides how it ends. */
async function serve(onExchange: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(onExchange);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

describe('ClientGone: the per-request cancel signal', () => {
  it('aborts once, with a reason, when the client leaves before the answer; later listeners are not called', async () => {
    let gone: ClientGone | undefined;
    const calls: string[] = [];
    const served = await serve((_req, res) => {
      gone = new ClientGone(res);
      gone.addEventListener('abort', () => calls.push('first'));
      const removed = (): void => {
        calls.push('removed');
      };
      gone.addEventListener('abort', removed);
      gone.removeEventListener('abort', removed);
      gone.addEventListener('abort', () => calls.push('second'));
    });
    server = served.server;
    const client = request(served.url, { method: 'PUT' });
    client.on('error', () => undefined);
    client.end('{}');
    await vi.waitFor(() => expect(gone).toBeDefined());
    expect(gone?.aborted).toBe(false);
    client.destroy();
    await vi.waitFor(() => expect(gone?.aborted).toBe(true));
    expect(calls).toEqual(['first', 'second']);
    expect(gone?.reason).toBeInstanceOf(Error);
    gone?.addEventListener('abort', () => calls.push('late'));
    expect(calls).toEqual(['first', 'second']);
  });

  it('never aborts when the answer was sent in full', async () => {
    let gone: ClientGone | undefined;
    let closed = false;
    const served = await serve((_req, res) => {
      gone = new ClientGone(res);
      gone.addEventListener('abort', () => expect.unreachable('aborted after a full answer'));
      res.once('close', () => (closed = true));
      res.end('{}');
    });
    server = served.server;
    const answer = await fetch(served.url, { method: 'PUT', body: '{}' });
    expect(await answer.text()).toBe('{}');
    await vi.waitFor(() => expect(closed).toBe(true));
    expect(gone?.aborted).toBe(false);
    expect(gone?.reason).toBeUndefined();
  });
});
