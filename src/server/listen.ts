import type { Server } from 'node:net';

export interface BoundAddress {
  readonly host: string;
  readonly port: number;
}

/** Listens and reports the address actually bound (port 0 becomes the port the OS chose). */
export function listen(server: Server, host: string, port: number): Promise<BoundAddress> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error(`no TCP address bound for ${host}:${port}`));
        return;
      }
      resolve({ host: address.address, port: address.port });
    });
  });
}

/** Resolves once the server has stopped; a server that was not listening counts as closed. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
  });
}
