import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEY_NAMES, CONFIG_KEYS, isConfigKey, ZOOKEEPER_ONLY_KEYS } from '../../../src/config/config-keys.js';
import {
  REFERENCE_END,
  REFERENCE_START,
  renderConfigReference,
  withConfigReference,
} from '../../../src/config/config-reference.js';
import { parseProperties } from '../../../src/config/properties-parser.js';
import { load } from './config-test-helpers.js';

const SHIPPED = fileURLToPath(new URL('../../../config/elasticsearch-details.properties', import.meta.url));
const CONFIG_DOC = fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url));

const ORIGINAL_KEYS = [
  'zookeeper.servers',
  'zookeeper.session.timeout',
  'zookeeper.connection.retry',
  'zookeeper.connection.delay',
  'zookeeper.foregound.lock.prefix',
  'zookeeper.backgound.lock.prefix',
  'zookeeper.foregound.task.timeout',
  'zookeeper.backgound.task.timeout',
];

describe('config/elasticsearch-details.properties', () => {
  const text = readFileSync(SHIPPED, 'utf8');
  const entries = parseProperties(text, SHIPPED);

  it('sets every key once, with its canonical spelling and default value', () => {
    expect(entries.map((entry) => entry.key).sort()).toEqual([...CONFIG_KEY_NAMES].sort());
    for (const { key, value } of entries) {
      expect.soft(isConfigKey(key) ? CONFIG_KEYS[key].defaultValue : `${key} is not a registered key`, key).toBe(value);
    }
  });

  it('starts with the original keys in the original order, with their original comments', () => {
    expect(entries.slice(0, ORIGINAL_KEYS.length).map((entry) => entry.key)).toEqual(ORIGINAL_KEYS);
    expect(text).toContain('# comma-separated list of host:port pairs as localhost:2181,localhost:2182,localhost:2183\nzookeeper.servers=localhost:2181');
    expect(text).toContain('# lock prefix for foreground tasks\n# lowest the alphabet index, highest is the priority for the task\nzookeeper.foregound.lock.prefix=A');
  });

  it('loads without warnings into the defaults', () => {
    const shipped = load({ configFile: SHIPPED });
    expect(shipped.source.warnings).toEqual([]);
    expect({ ...shipped, source: null }).toEqual({ ...load(), source: null });
  });
});

describe('renderConfigReference', () => {
  const table = renderConfigReference();

  it('has a row per key naming its aliases, default and environment variable', () => {
    const rows = table.trimEnd().split('\n').slice(2);
    expect(rows).toHaveLength(CONFIG_KEY_NAMES.length);
    expect(table).toContain(
      '| `zookeeper.foregound.lock.prefix`<br>alias `zookeeper.foreground.lock.prefix` | `A` | `ES_LOCK_PROXY_ZOOKEEPER_FOREGOUND_LOCK_PREFIX` | restart |',
    );
    expect(table).toContain('| `proxy.log.level` | `info` | `ES_LOCK_PROXY_PROXY_LOG_LEVEL`, `LOG_LEVEL` | live (SIGHUP) |');
    expect(table).toContain('| `proxy.admin.token` | (unset) |');
  });

  it('marks exactly the keys that proxy.lock.service=in-process ignores', () => {
    const marked = table.split('\n').filter((row) => row.includes('Ignored with `proxy.lock.service=in-process`'));
    expect(marked.map((row) => /^\| `([^`]+)`/.exec(row)?.[1])).toEqual([...ZOOKEEPER_ONLY_KEYS]);
    expect(ZOOKEEPER_ONLY_KEYS).not.toContain('zookeeper.foregound.task.timeout');
    expect(ZOOKEEPER_ONLY_KEYS).toContain('zookeeper.servers');
  });

  it('replaces the table between the markers', () => {
    const readme = `intro\n${REFERENCE_START}\nold table\n${REFERENCE_END}\noutro\n`;
    expect(withConfigReference(readme)).toBe(`intro\n${REFERENCE_START}\n${table}${REFERENCE_END}\noutro\n`);
    expect(withConfigReference('no markers')).toBeNull();
  });

  it('matches docs/configuration.md (regenerate with `npm run docs:config`)', () => {
    const doc = readFileSync(CONFIG_DOC, 'utf8');
    expect(withConfigReference(doc)).toBe(doc);
  });
});
