import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { LogFormat, ProxySettings } from '../config/settings.js';

export const REDACTED = '[redacted]';

/**
 * Where credentials can show up in log objects: request headers (as logged by the HTTP layer,
 * at the top level or one object deep), password/API-key fields, and a `Settings` object logged
 * whole by mistake. pino's redaction matches fixed paths only (`*` is one level), so deeper
 * objects must be logged through `redactSettings` or trimmed before logging.
 */
export const REDACT_PATHS: readonly string[] = [
  ...withOneLevelWildcard([
    'authorization',
    'password',
    'apiKey',
    'api_key',
    'credentials',
    'adminToken',
    'headers.authorization',
    'headers["proxy-authorization"]',
    'headers.cookie',
    'headers["set-cookie"]',
    'headers["x-api-key"]',
  ]),
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  ...withOneLevelWildcard([
    'proxy.adminToken',
    'elasticsearch.auth.password',
    'elasticsearch.auth.apiKey',
    'zookeeper.auth.credentials',
  ]),
];

function withOneLevelWildcard(paths: readonly string[]): string[] {
  return paths.flatMap((path) => [path, `*.${path}`]);
}

export interface LoggerOptions {
  readonly level: ProxySettings['logLevel'];
  readonly format: LogFormat;
  /** Defaults to stdout; tests pass a stream to capture the output. */
  readonly destination?: DestinationStream | NodeJS.WritableStream;
  /** File descriptor or path of the `json` destination when no stream is given (default 1, stdout). */
  readonly dest?: number | string;
}

/**
 * The process logger: JSON lines on stdout (`json`) through pino's asynchronous destination — a
 * request never waits for a write to the terminal or a pipe; `flushLogsSync` (called on shutdown
 * and on a fatal error) writes out what is still buffered. `pretty` (pino-pretty, for a terminal)
 * stays synchronous.
 */
export function createLogger(options: LoggerOptions): Logger {
  const pinoOptions = {
    level: options.level,
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return pino(pinoOptions, destinationFor(options));
}

function destinationFor(options: LoggerOptions): DestinationStream {
  if (options.format === 'pretty') {
    return pretty({ destination: options.destination ?? 1, sync: true, translateTime: 'SYS:standard' });
  }
  if (options.destination !== undefined) return toDestination(options.destination);
  return pino.destination({ dest: options.dest ?? 1, sync: false });
}

/** Writes out whatever the logger's destination still buffers (a no-op for synchronous ones). */
export function flushLogsSync(logger: Logger): void {
  const stream: unknown = Reflect.get(logger, pino.symbols.streamSym);
  if (typeof stream !== 'object' || stream === null || !('flushSync' in stream) || typeof stream.flushSync !== 'function') return;
  try {
    stream.flushSync();
  } catch {
    // A destination that is still opening (or gone) cannot be flushed; nothing more can be done.
  }
}

/**
 * On an uncaught exception or unhandled rejection: logs it at fatal, flushes the asynchronous
 * destination (so the line that explains the crash is not lost with the buffer), then exits 1.
 * Returns the function that removes the handlers.
 */
export function exitOnFatalError(logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): () => void {
  const onFatal = (error: unknown): void => {
    logger.fatal({ err: error }, 'es-lock-proxy crashed');
    flushLogsSync(logger);
    exit(1);
  };
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
  return () => {
    process.off('uncaughtException', onFatal);
    process.off('unhandledRejection', onFatal);
  };
}

/** A Node writable is a valid pino destination; this keeps the type honest without a cast. */
function toDestination(stream: DestinationStream | NodeJS.WritableStream): DestinationStream {
  return { write: (line: string) => void stream.write(line) };
}
