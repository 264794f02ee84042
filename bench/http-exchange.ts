import { type Agent, request } from 'node:http';

/** One request through `agent`, its answer read to the end: resolves with the status code. */
export function exchangeStatus(agent: Agent, url: URL, method: string, headers: Record<string, string>, body: string | Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
