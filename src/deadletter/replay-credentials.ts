import { isCredentialHeader, type DeadLetterRecord } from './dead-letter-record.js';

export interface ReplayCredentials {
  /** Headers the operator adds to every replayed request (`--header`). */
  readonly extraHeaders: Readonly<Record<string, string>>;
  /** `--authorize-anonymous`: the operator's credentials may go with records that arrived without any. */
  readonly authorizeAnonymous: boolean;
}

export type CredentialCheck =
  | { readonly kind: 'send' }
  | { readonly kind: 'warn'; readonly message: string }
  | { readonly kind: 'refuse'; readonly message: string };

/**
 * Credentials are never stored with a record, so a replay carries the operator's. A record that
 * arrived WITHOUT credentials would then be written with the operator's rights, not the
 * anonymous caller's (a write Elasticsearch refused anonymously would pass, under the operator's
 * name): that needs the operator to say so. A record that had credentials and gets none is sent,
 * with a warning, and Elasticsearch decides.
 */
export function checkReplayCredentials(record: DeadLetterRecord, credentials: ReplayCredentials): CredentialCheck {
  const operatorSends = Object.keys(credentials.extraHeaders).filter(isCredentialHeader);
  if (!record.hadCredentials && operatorSends.length > 0 && !credentials.authorizeAnonymous) {
    return {
      kind: 'refuse',
      message:
        `${record.id} arrived without credentials and would be sent with yours (${operatorSends.join(', ')}); ` +
        'pass --authorize-anonymous to send it so, or replay it without them',
    };
  }
  if (record.hadCredentials && operatorSends.length === 0) {
    return { kind: 'warn', message: `${record.id} was sent with credentials, which are not stored; pass --header "Authorization: ..."` };
  }
  return { kind: 'send' };
}
