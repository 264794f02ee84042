/** Certificate checks that fail because the proxy's CA is not among those the replay trusts. */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/**
 * Why a replay could not be sent to the proxy, in one line, with what to do when the cause is a
 * usual mistake: a plain-HTTP URL for a port that speaks HTTPS (the TLS port closes the connection
 * without an HTTP answer: "socket hang up"), a proxy certificate whose CA was not given, or a
 * client certificate the port requires and did not get.
 */
export function describeReplayFailure(error: unknown, proxyUrl: URL): string {
  const code = error instanceof Error && 'code' in error ? String(error.code) : '';
  const message = reasonOf(error, code);
  return `${message}${hintFor(code, message, proxyUrl)}`;
}

function hintFor(code: string, message: string, proxyUrl: URL): string {
  if (proxyUrl.protocol === 'http:' && code === 'ECONNRESET') return ' (if the proxy port speaks HTTPS, use an https:// URL)';
  if (proxyUrl.protocol !== 'https:') return '';
  if (UNTRUSTED_CERTIFICATE.has(code)) return " (pass the CA that signed the proxy's certificate with --ca)";
  if (/certificate required|handshake failure|bad certificate|unknown ca/i.test(message)) {
    return ' (the proxy port may require a client certificate its CA signed: --cert and --key)';
  }
  return '';
}

/** OpenSSL's errors carry their reason apart from the long "80CC…:error:0A00045C:SSL routines:…" message. */
function reasonOf(error: unknown, code: string): string {
  if (!(error instanceof Error)) return String(error);
  if (code.startsWith('ERR_SSL_') && 'reason' in error && typeof error.reason === 'string') return error.reason;
  return error.message.split('\n')[0] ?? error.message;
}
