import { inject, describe, expect, it } from 'vitest';
import { fourLetterWord } from '../support/zookeeper-server.js';

describe('test harness', () => {
  it('provides a serving ZooKeeper', async () => {
    const connect = inject('zookeeperConnect');
    const [host, port] = connect.split(',')[0]!.split(':');
    expect(host).toBeTruthy();
    const reply = await fourLetterWord(Number(port), 'ruok');
    expect(reply).toBe('imok');
  });
});
