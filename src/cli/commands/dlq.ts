import type { Settings } from '../../config/settings.js';
import type { DeadLetterRecord } from '../../deadletter/dead-letter-record.js';
import type { DeadLetterStore } from '../../deadletter/dead-letter-store.js';
import type { DeadLetterLogger } from '../../deadletter/mirrored-dead-letter-store.js';
import { openDeadLetterStore } from '../../deadletter/open-dead-letter-store.js';
import { replayRecord } from '../../deadletter/replay.js';
import { checkReplayCredentials, type ReplayCredentials } from '../../deadletter/replay-credentials.js';
import type { CliContext, Command, ExitCode } from '../cli-context.js';
import { UsageError } from '../cli-context.js';
import { parseCommandArgs } from '../parse-command-args.js';
import { DEFAULT_CONFIG_FILE, SETTINGS_OPTIONS, settingsLoader } from '../settings-options.js';

const USAGE = `Usage: es-lock-proxy dlq list [--all] [--config FILE]
       es-lock-proxy dlq replay <id>|--all [--dry-run] [--proxy URL] [--header "Name: value" ...] [--authorize-anonymous] [--config FILE]

Lists or replays the dead-letter queue (proxy.deadletter.dir; with proxy.deadletter.index set, the
index every proxy instance shares, falling back to the local files when it cannot be read).

  list            records not replayed yet (--all: replayed ones too), one line each
  replay <id>     sends the record again THROUGH THE PROXY (it takes the document locks), then
                  marks it replayed with the answer's status
  replay --all    every record not replayed yet, oldest first

Replaying re-applies an old write: a newer write to the same document made since then is
overwritten. Check with \`dlq list\` first; --dry-run prints what would be sent.
Credentials are never stored with a record: pass them with --header "Authorization: ...".
A record that arrived without credentials is not sent with yours unless you add
--authorize-anonymous (it would be written with your rights instead of the anonymous caller's).

Options:
  -c, --config FILE     properties file (default: ${DEFAULT_CONFIG_FILE})
  -s, --set key=value   override one key
      --proxy URL       proxy to replay through (default: http://proxy.listen.host:proxy.listen.port)
      --header H        extra request header, repeatable
      --authorize-anonymous
                        also send your credential headers with records that arrived without credentials
      --dry-run         print, do not send
  -h, --help            show this help
`;

export const dlqCommand: Command = {
  name: 'dlq',
  summary: 'list or replay dead-lettered writes',
  usage: USAGE,
  run: runDlq,
};

async function runDlq(args: readonly string[], context: CliContext): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs('dlq', args, {
    ...SETTINGS_OPTIONS,
    all: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    proxy: { type: 'string' },
    header: { type: 'string', multiple: true },
    'authorize-anonymous': { type: 'boolean' },
  });
  if (values.help === true) {
    context.stdout.write(USAGE);
    return 0;
  }
  const [action, id, extra] = positionals;
  if (extra !== undefined) throw new UsageError(`dlq: unexpected argument "${extra}"`);
  const settings = settingsLoader(values, context)();
  if (action !== 'list' && action !== 'replay') {
    throw new UsageError(action === undefined ? 'dlq: missing action (list or replay)' : `dlq: unknown action "${action}"`);
  }
  if (action === 'replay' && (id === undefined) === (values.all !== true)) throw new UsageError('dlq replay: give one record id or --all');
  const store = openDeadLetterStore(settings, { logger: stderrLogger(context) });
  try {
    if (action === 'list') return await listRecords(store, values.all === true, context);
    const options = {
      dryRun: values['dry-run'] === true,
      proxyUrl: parseProxyUrl(values.proxy, settings),
      extraHeaders: parseHeaders(values.header ?? []),
      authorizeAnonymous: values['authorize-anonymous'] === true,
    };
    return await replay(store, settings, id ?? null, options, context);
  } finally {
    await store.close();
  }
}

/** Index failures of `get` and `markReplayed` reach the operator as one line each (`list` returns its own warnings). */
function stderrLogger(context: CliContext): DeadLetterLogger {
  const line = (fields: Record<string, unknown>, message: string): void => {
    const cause = fields.err instanceof Error ? `: ${fields.err.message}` : '';
    context.stderr.write(`dlq: ${message}${cause}\n`);
  };
  return { warn: line, error: line };
}

async function listRecords(store: DeadLetterStore, includeReplayed: boolean, context: CliContext): Promise<ExitCode> {
  const { records, corruptLines, truncated, warnings } = await store.list({ includeReplayed });
  for (const record of records) context.stdout.write(`${describeRecord(record)}\n`);
  for (const corrupt of corruptLines) context.stderr.write(`dlq: skipped unreadable line ${corrupt.file}:${corrupt.line}: ${corrupt.reason}\n`);
  for (const warning of warnings ?? []) context.stderr.write(`dlq: warning: ${warning}\n`);
  if (truncated === true) context.stderr.write('dlq: warning: more records exist than one listing shows (oldest first); replay these, then list again\n');
  context.stdout.write(`${records.length} record(s)\n`);
  return 0;
}

interface ReplayOptions extends ReplayCredentials {
  readonly dryRun: boolean;
  readonly proxyUrl: URL;
}

async function replay(
  store: DeadLetterStore,
  settings: Settings,
  id: string | null,
  options: ReplayOptions,
  context: CliContext,
): Promise<ExitCode> {
  const records = id === null ? (await store.list()).records : [await store.get(id)].filter((record) => record !== null);
  if (records.length === 0 && id !== null) {
    context.stderr.write(`es-lock-proxy: dlq replay: no dead-letter record with id "${id}"\n`);
    return 1;
  }
  context.stderr.write('dlq: warning: replaying re-applies old writes over anything written since\n');
  let failures = 0;
  for (const record of records) {
    if (record.replayedAt !== null && id !== null) context.stderr.write(`dlq: warning: ${record.id} was already replayed at ${record.replayedAt}\n`);
    const credentials = checkReplayCredentials(record, options);
    if (credentials.kind === 'refuse') {
      context.stderr.write(`es-lock-proxy: dlq replay: refused ${credentials.message}\n`);
      failures++;
      continue;
    }
    if (credentials.kind === 'warn') context.stderr.write(`dlq: warning: ${credentials.message}\n`);
    if (options.dryRun) {
      context.stdout.write(`would replay ${describeRecord(record)} via ${options.proxyUrl.origin}\n`);
      continue;
    }
    const result = await replayRecord(record, { proxyUrl: options.proxyUrl, lockHeader: settings.proxy.lockHeader, extraHeaders: options.extraHeaders });
    const ok = result.status >= 200 && result.status < 300 && !bulkHadErrors(result.body);
    if (ok) await store.markReplayed(record.id, String(result.status));
    else failures++;
    context.stdout.write(`${ok ? 'replayed' : 'failed'} ${record.id}: HTTP ${result.status}${ok ? '' : ` ${result.body.slice(0, 300)}`}\n`);
  }
  return failures === 0 ? 0 : 1;
}

function describeRecord(record: DeadLetterRecord): string {
  const keys = record.keys.slice(0, 3).map((key) => `${key.index}/${key.id}`).join(',');
  const more = record.keys.length > 3 ? ` (+${record.keys.length - 3})` : '';
  const replayed = record.replayedAt === null ? '' : ` replayed=${record.replayedAt}(${record.replayStatus})`;
  return `${record.id} ${record.createdAt} ${record.priority} ${record.method} ${record.path} keys=${keys}${more} attempts=${record.attempts} error=${record.lastError.code}${replayed}`;
}

/** A replayed bulk answered 200 may still have failed items (e.g. the lock timed out again). */
function bulkHadErrors(body: string): boolean {
  try {
    const answer: unknown = JSON.parse(body);
    return typeof answer === 'object' && answer !== null && 'errors' in answer && answer.errors === true;
  } catch {
    return false;
  }
}

function parseProxyUrl(value: string | undefined, settings: Settings): URL {
  const text = value ?? `http://${settings.proxy.listenHost}:${settings.proxy.listenPort}`;
  try {
    return new URL(text);
  } catch {
    throw new UsageError(`dlq replay: --proxy ${text}: expected a URL like http://127.0.0.1:9201`);
  }
}

function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(':');
    if (colon <= 0) throw new UsageError(`dlq replay: --header ${value}: expected "Name: value"`);
    headers[value.slice(0, colon).trim()] = value.slice(colon + 1).trim();
  }
  return headers;
}
