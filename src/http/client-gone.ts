import type { ServerResponse } from 'node:http';

/** Aborts when the client connection closes before its response was completely sent. */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('client closed the connection'));
  });
  return controller.signal;
}
