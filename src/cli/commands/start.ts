import type { Logger } from 'pino';
import { ConfigError } from '../../config/config-error.js';
import type { Settings } from '../../config/settings.js';
import { createLogger, exitOnFatalError, flushLogsSync } from '../../logging/logger.js';
import { redactSettings, redactUrl } from '../../logging/redact-settings.js';
import { startProxyRuntime } from '../../server/proxy-runtime.js';
import type { CliContext, Command, ExitCode } from '../cli-context.js';
import { UsageError } from '../cli-context.js';
import { parseCommandArgs } from '../parse-command-args.js';
import { DEFAULT_CONFIG_FILE, SETTINGS_OPTIONS, settingsLoader } from '../settings-options.js';
import { closeOnShutdownSignal } from '../signals.js';
import { watchSettings } from '../../server/settings-watcher.js';


const USAGE = `Usage: es-lock-proxy start [--config FILE] [--set key=value ...]

Starts the proxy and runs until SIGTERM or SIGINT.

Options:
  -c, --config FILE     properties file (default: ${DEFAULT_CONFIG_FILE}, relative to the working directory)
  -s, --set key=value   override one key; repeatable; wins over the file and the environment
  -h, --help            show this help
`;

export const startCommand: Command = {
  name: 'start',
  summary: 'start the proxy (until SIGTERM/SIGINT)',
  usage: USAGE,
  run: runStart,
};

async function runStart(args: readonly string[], context: CliContext): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs('start', args, SETTINGS_OPTIONS);
  if (values.help === true) {
    context.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`start: unexpected argument "${positionals[0]}"`);
  const reread = settingsLoader(values, context);
  const settings = reread();
  const logger = createLogger({ level: settings.proxy.logLevel, format: settings.proxy.logFormat });
  const stopFatalHandler = exitOnFatalError(logger);
  for (const warning of settings.source.warnings ?? []) logger.warn(warning);
  try {
    return await serve(settings, reread, logger, context);
  } finally {
    stopFatalHandler();
    // Logs go through an asynchronous destination: what is buffered is written before exit.
    flushLogsSync(logger);
  }
}

async function serve(settings: Settings, reread: () => Settings, logger: Logger, context: CliContext): Promise<ExitCode> {
  let proxy;
  try {
    proxy = await startProxyRuntime(settings, logger);
  } catch (error) {
    // An installation mistake (our ZooKeeper addon missing or not ours) is the user's to fix:
    // one line naming the fix and exit 2, like a configuration mistake.
    if (error instanceof ConfigError) throw error;
    logger.fatal({ err: error }, 'es-lock-proxy failed to start');
    context.stderr.write(`es-lock-proxy: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  // Handlers first: once the startup line is out, a supervisor may signal at any moment.
  const exitCode = closeOnShutdownSignal(proxy, context.signals, logger);
  const stopWatching = watchSettings({
    reread,
    target: proxy,
    logger,
    configFile: settings.source.configFile,
    alsoWatch: listenerTlsFiles(settings),
    signals: context.signals,
  });
  void exitCode.finally(stopWatching);
  logger.info(
    {
      listen: hostPort(proxy.proxyAddress),
      scheme: proxy.proxyScheme,
      admin: hostPort(proxy.adminAddress),
      upstream: settings.elasticsearch.hosts.map(redactUrl),
      lockService: settings.proxy.lockService,
      zookeeper: settings.proxy.lockService === 'zookeeper' ? settings.zookeeper.servers : null,
      configFile: settings.source.configFile,
      settings: redactSettings(settings),
    },
    'es-lock-proxy started',
  );
  return exitCode;
}

/** A certificate renewed in place (cert-manager, certbot) is picked up without a signal. */
function listenerTlsFiles(settings: Settings): string[] {
  const tls = settings.proxy.listenTls;
  if (tls === null) return [];
  return [tls.certFile, tls.keyFile, ...(tls.caFile !== null ? [tls.caFile] : [])];
}

/** `host:port`, with IPv6 addresses bracketed as in URLs. */
function hostPort(address: { readonly host: string; readonly port: number }): string {
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
