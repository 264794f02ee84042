import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/**
 * Names a client's credentials in the proxy's caches without keeping them: an HMAC-SHA256 under
 * a key drawn at random per process. A heap dump or a log of cache keys reveals no password,
 * API key or token, and a key cannot be checked against a guessed credential offline without
 * the process's secret.
 */
export class CredentialKeys {
  /** Imported once: an HMAC keyed with raw bytes imports them again on every call. */
  private readonly secret: KeyObject;

  constructor(secret: Buffer = randomBytes(32)) {
    this.secret = createSecretKey(secret);
  }

  /** One key per distinct set of credential headers (`\0` cannot occur inside a header value). */
  keyOf(credentials: readonly string[]): string {
    const hmac = createHmac('sha256', this.secret);
    for (const part of credentials) hmac.update(part).update('\0');
    return hmac.digest('base64url');
  }
}
