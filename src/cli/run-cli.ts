import { ConfigError } from '../config/config-error.js';
import { UsageError, type CliContext, type ExitCode } from './cli-context.js';
import { findCommand } from './commands/index.js';
import { usageText } from './usage.js';
import { packageVersion } from './version.js';

const PROGRAM = 'es-lock-proxy';

/**
 * Dispatches `es-lock-proxy <command> ...` and resolves with the exit code. User mistakes
 * (usage, configuration) become one line on stderr and exit 2, never a stack trace; anything
 * else is a bug and propagates with its stack.
 */
export async function runCli(argv: readonly string[], context: CliContext): Promise<ExitCode> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h' || first === 'help') {
    context.stdout.write(usageText());
    return 0;
  }
  if (first === '--version' || first === '-V') {
    context.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const command = first === undefined ? null : findCommand(first);
  if (command === null) {
    const problem = first === undefined ? 'missing command' : `unknown command "${first}"`;
    context.stderr.write(`${PROGRAM}: ${problem}\n\n${usageText()}`);
    return 2;
  }
  try {
    return await command.run(rest, context);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof UsageError) {
      const hint = error instanceof UsageError ? ` (see ${PROGRAM} ${command.name} --help)` : '';
      context.stderr.write(`${PROGRAM}: ${error.message}${hint}\n`);
      return 2;
    }
    throw error;
  }
}
