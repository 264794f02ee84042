import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { pino, type Logger } from 'pino';
import type { Router } from 'express';

export interface AdminTestServer {
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** The routers under test on an express app of their own, on a loopback port the OS picks. */
export async function startAdminTestServer(...routers: readonly Router[]): Promise<AdminTestServer> {
  const app = express();
  for (const router of routers) app.use(router);
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve, reject) => {
    const listening = app.listen(0, '127.0.0.1', (error?: Error) => (error === undefined ? resolve(listening) : reject(error)));
  });
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('admin test server has no TCP address');
  const { port } = address;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}

/** A pino logger whose lines the test can read back. */
export function capturingLogger(): { readonly logger: Logger; readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}
