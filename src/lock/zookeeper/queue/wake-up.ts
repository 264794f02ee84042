/** Why the acquisition loop woke: its watch fired, the watched node was already gone, or a local change. */
export type WakeReason = 'event' | 'gone' | 'poked';

/**
 * The acquisition loop's one sleep: waiting for a watch (predecessor or privateLock) or for a
 * local change (a better request arrived, the last one gave up, the session ended). A wake-up
 * that comes before the sleep is kept, so none is lost between leaving a watch and sleeping.
 */
export class WakeUp {
  private reason: WakeReason | null = null;
  private resume: (() => void) | null = null;

  /** Forgets earlier wake-ups: call once the loop has decided to wait, before anything it awaits. */
  arm(): void {
    this.reason = null;
  }

  wake(reason: WakeReason): void {
    this.reason ??= reason;
    this.resume?.();
  }

  /** Resolves at once when woken since `arm()` (or when `stopped`), else at the next wake-up. */
  sleep(stopped: boolean): Promise<WakeReason> {
    if (this.reason !== null || stopped) return Promise.resolve(this.reason ?? 'poked');
    return new Promise((resolve) => {
      this.resume = () => {
        this.resume = null;
        resolve(this.reason ?? 'poked');
      };
    });
  }
}
