import { describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger, REDACTED } from '../../../src/logging/logger.js';

function captured(): { stream: Writable; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

const SECRETS = ['Basic ZWxhc3RpYzpodW50ZXIy', 'hunter2', 'Bearer tok-1', 'Bearer tok-2', 'sid=42', 'ApiKey abc', 'k3y', 'u:pw', 'tok3n', 'proxy-pass', 'zk:pw'];

function logEverySecret(logger: ReturnType<typeof createLogger>): void {
  logger.info(
    {
      headers: { authorization: SECRETS[0], 'proxy-authorization': 'proxy-pass', cookie: 'sid=42', 'content-type': 'application/json' },
      password: 'hunter2',
      upstream: { authorization: 'Bearer tok-1', password: 'hunter2', headers: { authorization: 'Bearer tok-2', 'x-api-key': 'ApiKey abc' } },
      req: { method: 'PUT', headers: { authorization: 'Bearer tok-2', cookie: 'sid=42' } },
      apiKey: 'k3y',
      credentials: 'u:pw',
      settings: { proxy: { adminToken: 'tok3n', listenPort: 9201 }, zookeeper: { auth: { scheme: 'digest', credentials: 'zk:pw' } } },
    },
    'request forwarded',
  );
}

describe('createLogger', () => {
  it('writes JSON lines with credentials redacted', () => {
    const out = captured();
    logEverySecret(createLogger({ level: 'info', format: 'json', destination: out.stream }));
    const text = out.text();
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    const line: unknown = JSON.parse(text.trim());
    expect(line).toMatchObject({
      msg: 'request forwarded',
      level: 30,
      headers: { authorization: REDACTED, 'proxy-authorization': REDACTED, cookie: REDACTED, 'content-type': 'application/json' },
      password: REDACTED,
      upstream: { authorization: REDACTED, password: REDACTED, headers: { authorization: REDACTED, 'x-api-key': REDACTED } },
      req: { method: 'PUT', headers: { authorization: REDACTED } },
      apiKey: REDACTED,
      credentials: REDACTED,
      settings: { proxy: { adminToken: REDACTED, listenPort: 9201 }, zookeeper: { auth: { scheme: 'digest', credentials: REDACTED } } },
    });
  });

  it('honours the level', () => {
    const out = captured();
    const logger = createLogger({ level: 'warn', format: 'json', destination: out.stream });
    logger.info('hidden');
    logger.warn('shown');
    expect(out.text()).not.toContain('hidden');
    expect(out.text()).toContain('shown');
    logger.level = 'debug';
    logger.debug('now visible');
    expect(out.text()).toContain('now visible');
  });

  it('pretty format is human-readable and redacted too', async () => {
    const out = captured();
    logEverySecret(createLogger({ level: 'info', format: 'pretty', destination: out.stream }));
    await vi.waitFor(() => expect(out.text()).toContain('request forwarded'));
    const text = out.text();
    expect(text).toMatch(/INFO/);
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toContain(REDACTED);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  });
});
