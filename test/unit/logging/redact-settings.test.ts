import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../../src/config/load-settings.js';
import { redactSettings, redactUrl } from '../../../src/logging/redact-settings.js';

const load = (flags: string[]) => loadSettings({ configFile: null, env: {}, flags });

describe('redactSettings', () => {
  it('hides every credential, keeps the ZooKeeper user, strips URL user info', () => {
    const settings = load([
      'elasticsearch.hosts=http://elastic:hunter2@es1:9200,https://es2:9243',
      'elasticsearch.auth.username=proxyuser',
      'elasticsearch.auth.password=p4ssw0rd',
      'proxy.admin.token=t0ken',
      'zookeeper.auth=digest:zkuser:zkp:ss',
    ]);
    const redacted = redactSettings(settings);
    const text = JSON.stringify(redacted);
    for (const secret of ['hunter2', 'p4ssw0rd', 't0ken', 'zkp:ss', 'zkp']) expect(text).not.toContain(secret);
    expect(redacted).toMatchObject({
      'elasticsearch.hosts': 'http://es1:9200/,https://es2:9243/',
      'elasticsearch.auth.username': 'proxyuser',
      'elasticsearch.auth.password': '[redacted]',
      'elasticsearch.auth.api_key': null,
      'proxy.admin.token': '[redacted]',
      'zookeeper.auth': 'digest:zkuser:[redacted]',
      'zookeeper.servers': 'localhost:2181',
      'proxy.max.body.bytes': '100mb',
      'proxy.deadletter.index': null,
    });
  });

  it('shows the ZooKeeper keys as null when in-process locks ignore them', () => {
    const redacted = redactSettings(load(['proxy.lock.service=in-process', 'zookeeper.servers=zk:2181']));
    expect(redacted).toMatchObject({ 'proxy.lock.service': 'in-process', 'zookeeper.servers': null, 'zookeeper.lock.root': null });
    expect(redacted['zookeeper.foregound.task.timeout']).toBe('2000');
  });

  it('hides an API key', () => {
    const redacted = redactSettings(load(['elasticsearch.auth.api_key=c2VjcmV0']));
    expect(redacted['elasticsearch.auth.api_key']).toBe('[redacted]');
    expect(JSON.stringify(redacted)).not.toContain('c2VjcmV0');
  });

  it('redactUrl leaves a URL without user info as it is and does not touch the original', () => {
    const url = new URL('http://u:p@h:1/x');
    expect(redactUrl(url)).toBe('http://h:1/x');
    expect(url.href).toBe('http://u:p@h:1/x');
    expect(redactUrl(new URL('https://h:2'))).toBe('https://h:2/');
  });
});
