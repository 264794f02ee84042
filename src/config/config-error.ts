import { ProxyError } from '../errors/proxy-error.js';

/**
 * A user's configuration mistake. The message is always one line naming the key (or path), the
 * value and what was expected, because the CLI prints it as-is instead of a stack trace.
 */
export class ConfigError extends ProxyError {
  constructor(message: string, options: { cause?: unknown; meta?: Record<string, unknown> } = {}) {
    super('CONFIG_INVALID', toOneLine(message), options);
  }
}

function toOneLine(message: string): string {
  return message.replace(/\s*[\r\n]+\s*/g, ' ');
}
