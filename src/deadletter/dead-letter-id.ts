import { randomBytes } from 'node:crypto';

let lastMillis = 0;
let sequence = 0;

/**
 * `dlq-<13-digit epoch ms>-<6-digit sequence>-<8 hex random>`: sorts by creation time (the sequence
 * keeps ids made in the same millisecond in order within a process) and the random part keeps ids
 * from different proxy instances apart.
 */
export function newDeadLetterId(nowMillis: number): string {
  const millis = Math.max(Math.trunc(nowMillis), lastMillis);
  sequence = millis === lastMillis ? sequence + 1 : 0;
  lastMillis = millis;
  return `dlq-${String(millis).padStart(13, '0')}-${String(sequence).padStart(6, '0')}-${randomBytes(4).toString('hex')}`;
}
