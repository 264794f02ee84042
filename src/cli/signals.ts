import type { Logger } from 'pino';
import type { ExitCode, SignalSource } from './cli-context.js';

const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

export interface Closable {
  close(): Promise<void>;
}

/**
 * Resolves with the exit code once a SIGTERM/SIGINT has closed `target`: 0 after a clean
 * close, 1 if close failed. A second signal while closing resolves with 1 at once, so an
 * operator can always get out of a stuck shutdown.
 */
export function closeOnShutdownSignal(target: Closable, signals: SignalSource, logger: Logger): Promise<ExitCode> {
  return new Promise((resolve) => {
    let closing = false;
    const finish = (code: ExitCode): void => {
      SHUTDOWN_SIGNALS.forEach((signal) => signals.off(signal, onSignal));
      resolve(code);
    };
    function onSignal(signal: NodeJS.Signals): void {
      if (closing) {
        logger.warn({ signal }, 'second signal during shutdown: exiting now');
        finish(1);
        return;
      }
      closing = true;
      logger.info({ signal }, 'es-lock-proxy shutting down');
      target.close().then(
        () => {
          logger.info('es-lock-proxy stopped');
          finish(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'es-lock-proxy shutdown failed');
          finish(1);
        },
      );
    }
    SHUTDOWN_SIGNALS.forEach((signal) => signals.on(signal, onSignal));
  });
}
