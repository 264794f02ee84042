/**
 * Child process of logger-flush.test.ts: logs through the asynchronous destination into the file
 * named by argv[2], then crashes (argv[3] = "crash") or shuts down (argv[3] = "shutdown").
 */
import { openSync } from 'node:fs';
import { createLogger, exitOnFatalError, flushLogsSync } from '../../../src/logging/logger.js';

const [file, mode] = process.argv.slice(2);
// A descriptor, like the proxy's stdout: the destination is ready at once.
const logger = createLogger({ level: 'info', format: 'json', dest: openSync(file ?? '/dev/null', 'w') });
exitOnFatalError(logger);
for (let i = 0; i < 200; i++) logger.info({ i }, 'buffered line');
if (mode === 'crash') {
  setImmediate(() => {
    throw new Error('boom');
  });
} else {
  flushLogsSync(logger);
  process.exit(0);
}
