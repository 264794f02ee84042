import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startEsStandIn } from '../../support/es-stand-in.js';
import { createTestPki } from '../../support/test-certificates.js';
import { servedFingerprint } from '../../support/tls-client.js';
import { completion, runCli, spawnCli, waitForLine } from '../cli/run-cli-process.js';

const pki = createTestPki();
afterAll(() => pki.cleanup());

describe('es-lock-proxy start with HTTPS on the proxy port', () => {
  it('a key of another certificate: exit 2 and one stderr line naming the key, the value and what was expected', async () => {
    const server = pki.issueServer('cli-server');
    const other = pki.issueServer('cli-other');
    const run = await runCli(['start', '--set', `proxy.listen.tls.cert=${server.certFile}`, '--set', `proxy.listen.tls.key=${other.keyFile}`]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `es-lock-proxy: proxy.listen.tls.key=${other.keyFile}: expected the private key of the certificate in proxy.listen.tls.cert (${server.certFile})\n`,
    );
  });

  it('rotates the certificate on SIGHUP, and when the files are replaced in place, without a restart', async () => {
    const standIn = await startEsStandIn();
    // The configured paths are symbolic links into a directory the proxy does not watch: replacing
    // what they point to changes nothing the file watch sees, so only the signal can rotate.
    const served = join(pki.dir, 'served');
    const behind = join(pki.dir, 'behind');
    mkdirSync(served);
    mkdirSync(behind);
    const first = pki.issueServer('cli-first');
    pki.replace(first.certFile, join(behind, 'cert.pem'));
    pki.replace(first.keyFile, join(behind, 'key.pem'));
    symlinkSync(join(behind, 'cert.pem'), join(served, 'cert.pem'));
    symlinkSync(join(behind, 'key.pem'), join(served, 'key.pem'));
    const configFile = join(pki.dir, 'tls.properties');
    writeFileSync(
      configFile,
      [
        `zookeeper.servers=${inject('zookeeperConnect')}`,
        'zookeeper.lock.root=/tls-cli',
        `elasticsearch.hosts=${standIn.url}`,
        'proxy.listen.port=0',
        'proxy.admin.port=0',
        `proxy.listen.tls.cert=${join(served, 'cert.pem')}`,
        `proxy.listen.tls.key=${join(served, 'key.pem')}`,
        `proxy.deadletter.dir=${join(pki.dir, 'dlq')}`,
      ].join('\n'),
    );
    const child = spawnCli(['start', '--config', configFile]);
    const done = completion(child);
    try {
      const startup = JSON.parse(await waitForLine(child, (line) => line.includes('es-lock-proxy started'))) as { listen: string; scheme: string };
      expect(startup.scheme).toBe('https');
      const port = Number(startup.listen.split(':').at(-1));
      expect(await servedFingerprint(port, pki.ca)).toBe(first.fingerprint256);

      const renewed = pki.issueServer('cli-renewed');
      pki.replace(renewed.certFile, join(behind, 'cert.pem'));
      pki.replace(renewed.keyFile, join(behind, 'key.pem'));
      const reloaded = waitForLine(child, (line) => line.includes('listener certificate reloaded'));
      child.kill('SIGHUP');
      expect(JSON.parse(await reloaded)).toMatchObject({ fingerprint256: renewed.fingerprint256, previous: first.fingerprint256 });
      expect(await servedFingerprint(port, pki.ca)).toBe(renewed.fingerprint256);

      // No signal this time: the files themselves are replaced (as certbot and cert-manager do).
      const again = pki.issueServer('cli-again');
      const watched = waitForLine(child, (line) => line.includes('listener certificate reloaded'));
      pki.replace(again.keyFile, join(pki.dir, 'next.key'));
      pki.replace(again.certFile, join(pki.dir, 'next.pem'));
      renameSync(join(pki.dir, 'next.key'), join(served, 'key.pem'));
      renameSync(join(pki.dir, 'next.pem'), join(served, 'cert.pem'));
      expect(JSON.parse(await watched)).toMatchObject({ fingerprint256: again.fingerprint256 });
      expect(await servedFingerprint(port, pki.ca)).toBe(again.fingerprint256);

      child.kill('SIGTERM');
      const run = await done;
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
    } finally {
      child.kill('SIGKILL');
      await standIn.stop();
    }
  });
});
