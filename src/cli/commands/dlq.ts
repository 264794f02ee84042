import type { Settings } from '../../config/settings.js';
import type { DeadLetterRecord } from '../../deadletter/dead-letter-record.js';
import type { DeadLetterStore } from '../../deadletter/dead-letter-store.js';
import type { DeadLetterLogger } from '../../deadletter/mirrored-dead-letter-store.js';
import { openDeadLetterStore } from '../../deadletter/open-dead-letter-store.js';
import { replayAgent, replayRecord, type ReplayResult, type ReplayTarget } from '../../deadletter/replay.js';
import { describeReplayFailure } from '../../deadletter/replay-failure.js';
import { checkReplayCredentials } from '../../deadletter/replay-credentials.js';
import type { CliContext, Command, ExitCode } from '../cli-context.js';
import { UsageError } from '../cli-context.js';
import { parseCommandArgs } from '../parse-command-args.js';
import { replayOptions, type ReplayOptions } from './dlq-replay-options.js';
import { DEFAULT_CONFIG_FILE, SETTINGS_OPTIONS, settingsLoader } from '../settings-options.js';

const USAGE = `Usage: es-lock-proxy dlq list [--all] [--config FILE]
       es-lock-proxy dlq replay <id>|--all [--dry-run] [--proxy URL] [--ca FILE] [--cert FILE --key FILE]
                                [--header "Name: value" ...] [--authorize-anonymous] [--config FILE]

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
      --proxy URL       proxy to replay through, http:// or https:// (default: the configured
                        proxy.listen.host and port, https:// when proxy.listen.tls.cert is set,
                        127.0.0.1 when the proxy listens on every address)
      --ca FILE         PEM CA certificate(s) to trust for an https:// proxy (default: the system's)
      --cert FILE       PEM client certificate for a proxy port that requires one (mutual TLS)
      --key FILE        its unencrypted PEM private key
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
    ca: { type: 'string' },
    cert: { type: 'string' },
    key: { type: 'string' },
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
  const options = action === 'replay' ? replayOptions(values, settings) : null;
  const store = openDeadLetterStore(settings, { logger: stderrLogger(context) });
  try {
    if (options === null) return await listRecords(store, values.all === true, context);
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
  const agent = replayAgent(options.proxyUrl, options.tls);
  try {
    return await replayEach(records, id !== null, { proxyUrl: options.proxyUrl, lockHeader: settings.proxy.lockHeader, extraHeaders: options.extraHeaders, agent }, store, options, context);
  } finally {
    agent.destroy();
  }
}

/**
 * Replays the records in order. A record the proxy answered with an error is reported and the next
 * one tried; a record that could not be sent at all (connection, TLS) stops the run, as every later
 * one would fail the same way.
 */
async function replayEach(
  records: readonly DeadLetterRecord[],
  named: boolean,
  target: ReplayTarget,
  store: DeadLetterStore,
  options: ReplayOptions,
  context: CliContext,
): Promise<ExitCode> {
  let failures = 0;
  for (const [index, record] of records.entries()) {
    if (record.replayedAt !== null && named) context.stderr.write(`dlq: warning: ${record.id} was already replayed at ${record.replayedAt}\n`);
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
    let result: ReplayResult;
    try {
      result = await replayRecord(record, target);
    } catch (error) {
      const untried = records.length - index - 1;
      context.stderr.write(
        `es-lock-proxy: dlq replay: could not replay ${record.id} through ${options.proxyUrl.origin}: ${describeReplayFailure(error, options.proxyUrl)}\n`,
      );
      if (untried > 0) context.stderr.write(`dlq: ${untried} later record(s) not tried\n`);
      return 1;
    }
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
