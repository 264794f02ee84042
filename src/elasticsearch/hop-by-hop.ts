/**
 * Headers that describe one connection rather than the message (RFC 9110 §7.6.1), plus the legacy
 * `proxy-connection` and `keep-alive`: never relayed, in either direction, nor kept for a replay.
 * The one list; each user adds what its own hop rebuilds (`host`, `content-length`, `expect`).
 */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
