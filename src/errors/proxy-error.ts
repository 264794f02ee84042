import type { ErrorCode } from './error-codes.js';

/**
 * Root of every error the proxy raises on purpose. The `code` is stable (logs, metrics and
 * tests key on it); the HTTP status and Elasticsearch error type derive from it in one table
 * (`error-codes.ts`) so that no call site picks a status by hand.
 */
export class ProxyError extends Error {
  readonly code: ErrorCode;
  readonly meta: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; meta?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.meta = Object.freeze({ ...(options.meta ?? {}) });
  }
}
