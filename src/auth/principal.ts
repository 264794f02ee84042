/**
 * Who the cluster says a write comes from, as `GET /_security/_authenticate` answers.
 * Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/rest/action/RestAuthenticateAction.java
 * (the body is `Authentication#toXContent`: `username`, `roles`, `authentication_realm`,
 * `authentication_type`, and `api_key` {`id`, `name`} for an API key).
 */
export interface Principal {
  readonly username: string;
  readonly roles: readonly string[];
  /** The API key's name when the write authenticated with one (an API key may have no name). */
  readonly apiKeyName: string | null;
  readonly apiKeyId: string | null;
  /** `realm`, `api_key`, `token`, `anonymous`, `internal`. */
  readonly authenticationType: string;
}

/** The principal in an `_authenticate` answer, or null when the body is not one. */
export function principalOf(body: Buffer): Principal | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (!isRecord(parsed) || typeof parsed.username !== 'string') return null;
  const apiKey = isRecord(parsed.api_key) ? parsed.api_key : null;
  return {
    username: parsed.username,
    roles: Array.isArray(parsed.roles) ? parsed.roles.filter((role): role is string => typeof role === 'string') : [],
    apiKeyName: typeof apiKey?.name === 'string' ? apiKey.name : null,
    apiKeyId: typeof apiKey?.id === 'string' ? apiKey.id : null,
    authenticationType: typeof parsed.authentication_type === 'string' ? parsed.authentication_type : 'realm',
  };
}

/**
 * The name a principal is counted and bounded under: an API key is its own principal (keys of
 * one owner are often separate applications), named `owner/key-name` (or the key's id).
 */
export function principalName(principal: Principal): string {
  if (principal.apiKeyId === null) return principal.username;
  return `${principal.username}/${principal.apiKeyName ?? principal.apiKeyId}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
