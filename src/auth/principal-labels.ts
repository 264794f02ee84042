/** Principals named in metrics before the rest share `other`: a label per user must not grow without bound. */
export const MAX_PRINCIPAL_LABELS = 100;

export const OTHER_PRINCIPALS = 'other';
/** Writes whose principal is not known (credentials not checked). */
export const UNKNOWN_PRINCIPAL = 'unknown';

/**
 * The metric label of a principal: its name for the first `max` principals seen, `other` after
 * that, so the series count stays bounded whatever the number of users or API keys.
 */
export class PrincipalLabels {
  private readonly named = new Set<string>();

  constructor(private readonly max: number = MAX_PRINCIPAL_LABELS) {}

  labelOf(name: string | null): string {
    if (name === null) return UNKNOWN_PRINCIPAL;
    if (this.named.has(name)) return name;
    if (this.named.size >= this.max) return OTHER_PRINCIPALS;
    this.named.add(name);
    return name;
  }
}
