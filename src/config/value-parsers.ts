import { isIP } from 'node:net';
import { parseByteSize } from './byte-size.js';

/**
 * Thrown by a value parser; the loader turns it into a one-line `ConfigError` that names the
 * key and value, so parsers only say what they expected.
 */
export class InvalidValue extends Error {
  readonly expected: string;

  constructor(expected: string) {
    super(`expected ${expected}`);
    this.expected = expected;
  }
}

export type ValueParser<T> = (raw: string) => T;

/** Node timers and the ZooKeeper C client take 32-bit signed milliseconds. */
export const MAX_INT32 = 2_147_483_647;

export function integer(min: number, max: number = MAX_INT32): ValueParser<number> {
  return (raw) => {
    const text = raw.trim();
    const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidValue(`an integer from ${min} to ${max}`);
    }
    return value;
  };
}

export function oneOf<const T extends string>(choices: readonly T[]): ValueParser<T> {
  return (raw) => {
    const text = raw.trim().toLowerCase();
    const match = choices.find((choice) => choice === text);
    if (match === undefined) throw new InvalidValue(`one of ${choices.join(', ')}`);
    return match;
  };
}

export const booleanValue: ValueParser<boolean> = (raw) => oneOf(['true', 'false'])(raw) === 'true';

export const byteSize: ValueParser<number> = (raw) => {
  const bytes = parseByteSize(raw);
  if (bytes === null || bytes < 1) {
    throw new InvalidValue('a byte size such as 104857600, 512kb or 100mb (units b, kb, mb, gb, tb, pb)');
  }
  return bytes;
};

/** Comma-separated names, trimmed, empties dropped: `a, b,,c` is `[a, b, c]`; empty is `[]`. */
export const nameList: ValueParser<readonly string[]> = (raw) =>
  raw
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');

/** Empty means "unset" for keys without a default, so an override can clear a file's value. */
export function optional<T>(parse: ValueParser<T>): ValueParser<T | null> {
  return (raw) => (raw.trim() === '' ? null : parse(raw));
}

export const nonEmptyText: ValueParser<string> = (raw) => {
  const text = raw.trim();
  if (text === '') throw new InvalidValue('a non-empty value');
  return text;
};

/** A value kept byte for byte (secrets may legitimately start or end with spaces). */
export const secretText: ValueParser<string> = (raw) => {
  if (raw === '') throw new InvalidValue('a non-empty value');
  return raw;
};

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export const host: ValueParser<string> = (raw) => {
  const text = raw.trim();
  if (isIP(text) === 0 && !HOSTNAME.test(text)) throw new InvalidValue('a hostname or IP address');
  return text;
};

export const port: ValueParser<number> = (raw) => {
  try {
    return integer(0, 65535)(raw);
  } catch {
    throw new InvalidValue('a TCP port from 0 to 65535 (0 picks a free port)');
  }
};

export const httpUrlList: ValueParser<URL[]> = (raw) => {
  const expected = 'comma-separated http:// or https:// URLs such as http://localhost:9200';
  const items = raw.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) throw new InvalidValue(expected);
  return items.map((item) => {
    const url = URL.canParse(item) ? new URL(item) : null;
    if (url === null || !['http:', 'https:'].includes(url.protocol) || url.hostname === '') {
      throw new InvalidValue(expected);
    }
    if (url.search !== '' || url.hash !== '') throw new InvalidValue(`${expected} (no query or fragment)`);
    return url;
  });
};

const ZOOKEEPER_SERVERS_EXPECTED = 'comma-separated host:port pairs such as localhost:2181,localhost:2182 (optional /chroot suffix)';

/** Values people try for "no ZooKeeper"; the mode has its own key, which the error names. */
const NO_SERVERS = new Set(['', 'none', 'off', 'false', 'disabled']);

/** `host:port[,host:port...][/chroot]`, normalised (spaces around commas dropped). */
export const zookeeperServers: ValueParser<string> = (raw) => {
  const text = raw.trim();
  if (NO_SERVERS.has(text.toLowerCase())) {
    throw new InvalidValue(`${ZOOKEEPER_SERVERS_EXPECTED}; to run without ZooKeeper set proxy.lock.service=in-process instead`);
  }
  const slash = text.indexOf('/');
  const hostList = slash === -1 ? text : text.slice(0, slash);
  const chroot = slash === -1 ? '' : text.slice(slash);
  const pairs = hostList.split(',').map((pair) => pair.trim());
  if (!pairs.every(isHostPortPair)) throw new InvalidValue(ZOOKEEPER_SERVERS_EXPECTED);
  if (chroot !== '' && znodePathProblem(chroot) !== null) throw new InvalidValue(ZOOKEEPER_SERVERS_EXPECTED);
  return pairs.join(',') + chroot;
};

function isHostPortPair(pair: string): boolean {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]\s]+):(\d{1,5})$/.exec(pair);
  if (match === null) return false;
  const [, hostPart = '', portPart = ''] = match;
  const hostName = hostPart.startsWith('[') ? hostPart.slice(1, -1) : hostPart;
  const portNumber = Number(portPart);
  return (isIP(hostName) !== 0 || HOSTNAME.test(hostName)) && portNumber >= 1 && portNumber <= 65535;
}

export const lockRoot: ValueParser<string> = (raw) => {
  const text = raw.trim();
  const problem = znodePathProblem(text) ?? (text === '/' ? 'a node below the root' : null);
  if (problem !== null) throw new InvalidValue(`an absolute znode path such as /es-locks (${problem})`);
  return text;
};

/** ZooKeeper's own path rules (PathUtils.validatePath), plus its reserved /zookeeper tree. */
function znodePathProblem(path: string): string | null {
  if (!path.startsWith('/')) return 'must start with /';
  if (path.length > 1 && path.endsWith('/')) return 'no trailing /';
  if (path.length > 1 && path.slice(1).split('/').some((part) => part === '' || part === '.' || part === '..')) {
    return 'no empty, . or .. segments';
  }
  if ([...path].some(isForbiddenInZnodePath)) return 'no control or reserved characters';
  if (path === '/zookeeper' || path.startsWith('/zookeeper/')) return '/zookeeper is reserved';
  return null;
}

/** The code-unit ranges ZooKeeper's PathUtils rejects (controls, surrogates, private use, specials). */
function isForbiddenInZnodePath(char: string): boolean {
  const code = char.charCodeAt(0);
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0xd800 && code <= 0xf8ff) ||
    code >= 0xfff0
  );
}

/**
 * Lock node names are `<prefix>-<sequence>`: letters and digits only keep the `-` split
 * unambiguous and keep every prefix character above `-` in code-unit order, so ordering
 * prefixes orders node names (checked across both prefixes in `cross-checks.ts`).
 */
export const lockPrefix: ValueParser<string> = (raw) => {
  const text = raw.trim();
  if (!/^[A-Za-z0-9]{1,32}$/.test(text)) throw new InvalidValue('a lock prefix of 1 to 32 letters or digits');
  return text;
};

/** RFC 9110 `token`: the characters an HTTP field name may contain. */
export const httpHeaderName: ValueParser<string> = (raw) => {
  const text = raw.trim();
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(text)) throw new InvalidValue('an HTTP header name (RFC 9110 token)');
  return text;
};

/** Elasticsearch's index-name rules (MetadataCreateIndexService.validateIndexOrAliasName). */
export const indexName: ValueParser<string> = (raw) => {
  const text = raw.trim();
  const valid =
    text !== '' &&
    text !== '.' &&
    text !== '..' &&
    text === text.toLowerCase() &&
    !/[\\/*?"<>| ,#:]/.test(text) &&
    !/^[-_+]/.test(text) &&
    Buffer.byteLength(text, 'utf8') <= 255;
  if (!valid) throw new InvalidValue('a lowercase Elasticsearch index name');
  return text;
};

export interface DigestAuth {
  readonly scheme: 'digest';
  readonly credentials: string;
}

/** `digest:user:password`; the password may itself contain `:`. */
export const zookeeperAuth: ValueParser<DigestAuth> = (raw) => {
  const match = /^digest:([^:]+):(.+)$/s.exec(raw);
  if (match === null) throw new InvalidValue('digest:user:password');
  const [, user = '', password = ''] = match;
  return { scheme: 'digest', credentials: `${user}:${password}` };
};
