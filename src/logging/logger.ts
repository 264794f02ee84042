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
}

/**
 * The process logger: JSON lines on stdout (`json`), or pino-pretty's human-readable form
 * (`pretty`), written synchronously so nothing is lost when the process exits right after.
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
  return pino.destination({ dest: 1, sync: true });
}

/** A Node writable is a valid pino destination; this keeps the type honest without a cast. */
function toDestination(stream: DestinationStream | NodeJS.WritableStream): DestinationStream {
  return { write: (line: string) => void stream.write(line) };
}
