import { ProxyError } from '../../errors/proxy-error.js';

/**
 * A date-math index name the proxy cannot turn into a concrete name. `invalid`: Elasticsearch
 * refuses it too (its ElasticsearchParseException, 400 `parse_exception`). `unsupported`: valid
 * for Elasticsearch, but outside what the proxy evaluates; refused rather than locked on a guess.
 */
export class DateMathError extends Error {
  private constructor(
    readonly kind: 'invalid' | 'unsupported',
    message: string,
  ) {
    super(message);
    this.name = 'DateMathError';
  }

  static invalid(message: string): DateMathError {
    return new DateMathError('invalid', message);
  }

  static unsupported(message: string): DateMathError {
    return new DateMathError('unsupported', message);
  }

  toProxyError(): ProxyError {
    return new ProxyError(this.kind === 'invalid' ? 'DATE_MATH_INVALID' : 'DATE_MATH_UNSUPPORTED', this.message);
  }
}
