import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './cli-context.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `node:util` parseArgs in strict mode, its errors turned into one-line usage errors (they
 * are TypeErrors with ERR_PARSE_ARGS_* codes, not user-facing as they are).
 */
export function parseCommandArgs<const T extends Options>(command: string, args: readonly string[], options: T) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (error) {
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(`${command}: ${firstSentence(error.message)}`);
    }
    throw error;
  }
}

/** parseArgs appends a paragraph on `--` to unknown-option errors; the first sentence says it all. */
function firstSentence(message: string): string {
  return message.split(/(?<=[^.])\.\s+(?=[A-Z])|\n/)[0] ?? message;
}
