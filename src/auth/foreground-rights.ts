import type { Principal } from './principal.js';

/**
 * Whether `principal` may write in the foreground under `allow` (`proxy.priority.foreground.allow`):
 * an empty list lets everyone; a plain name matches the user, any of its roles, or the API key's
 * name; `user:`, `role:` and `api_key:` restrict a name to that kind. Without a known principal
 * (credentials not checked) nobody on a non-empty list can be recognised.
 */
export function mayWriteForeground(allow: readonly string[], principal: Principal | null): boolean {
  if (allow.length === 0) return true;
  if (principal === null) return false;
  return allow.some((entry) => matches(entry, principal));
}

function matches(entry: string, principal: Principal): boolean {
  const colon = entry.indexOf(':');
  const kind = colon < 0 ? '' : entry.slice(0, colon);
  const name = colon < 0 ? entry : entry.slice(colon + 1);
  switch (kind) {
    case 'user':
      return principal.username === name;
    case 'role':
      return principal.roles.includes(name);
    case 'api_key':
      return principal.apiKeyName === name;
    default:
      return principal.username === entry || principal.roles.includes(entry) || principal.apiKeyName === entry;
  }
}
