import { createHash, timingSafeEqual } from 'node:crypto';
import { ProxyError } from '../../errors/proxy-error.js';

/**
 * Checks `Authorization: Bearer <token>` against the configured admin token. Both sides are
 * hashed first so that the constant-time comparison always runs on equal-length buffers and
 * the token's length does not leak either. Resolves to the token's fingerprint for the logs.
 */
export function requireAdminToken(configured: string | null, authorization: string | undefined): string {
  if (configured === null || configured === '') {
    throw new ProxyError('ADMIN_FORBIDDEN', 'force release is disabled: proxy.admin.token is not set');
  }
  const presented = bearerTokenOf(authorization);
  if (presented === null) {
    throw new ProxyError('ADMIN_FORBIDDEN', 'force release needs the admin token as "Authorization: Bearer <token>"');
  }
  if (!timingSafeEqual(sha256(presented), sha256(configured))) {
    throw new ProxyError('ADMIN_FORBIDDEN', 'the admin token presented is not valid');
  }
  return tokenFingerprint(configured);
}

/** Identifies which token was used without revealing it. */
export function tokenFingerprint(token: string): string {
  return `sha256:${sha256(token).toString('hex').slice(0, 12)}`;
}

function bearerTokenOf(authorization: string | undefined): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  return match?.[1] ?? null;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
