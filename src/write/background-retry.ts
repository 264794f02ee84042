import type { Settings } from '../config/settings.js';
import type { CancelSignal, Priority } from '../lock/lock-engine.js';
import { backoffDelayMs, delay } from './backoff.js';
import { deadLetter, type DeadLetterSource, type GivenUpWrite } from './dead-letter.js';
import type { WritePathDeps } from './write-path-deps.js';

/**
 * What becomes of a write whose lock wait timed out, the same for a single document and for a
 * bulk's waiting items (the original plugin's retry before its dead-letter queue): a background
 * write goes back into the queue up to `elastic.request.retry.count` times with jittered backoff,
 * then is recorded for replay; a foreground write gets a single wait and is never recorded (its
 * client is waiting for the answer and retries on its own).
 */
export function retriesAfterTimeout(settings: Settings, priority: Priority, attempt: number): boolean {
  return priority === 'background' && attempt <= settings.elasticsearch.requestRetryCount;
}

/**
 * Waits the backoff before the next attempt after the `attempt`-th timed-out wait (1-based).
 * False: the client hung up meanwhile (gone, not an internal error).
 */
export function backOff(attempt: number, clientGone: CancelSignal): Promise<boolean> {
  return delay(backoffDelayMs(attempt - 1), clientGone).then(
    () => true,
    () => false,
  );
}

/** A write given up on: dead-lettered (background) with the record's id, or only timed out. */
export type GivenUp = { readonly outcome: 'dead_lettered'; readonly deadLetterId: string } | { readonly outcome: 'timeout'; readonly deadLetterId: null };

/** Records a background write given up on in the dead-letter queue; a foreground one is not recorded. */
export async function giveUp(deps: WritePathDeps, source: DeadLetterSource, write: GivenUpWrite): Promise<GivenUp> {
  if (write.priority !== 'background') return TIMED_OUT;
  const deadLetterId = await deadLetter(deps, source, write);
  return deadLetterId === null ? TIMED_OUT : { outcome: 'dead_lettered', deadLetterId };
}

const TIMED_OUT: GivenUp = Object.freeze({ outcome: 'timeout', deadLetterId: null });
