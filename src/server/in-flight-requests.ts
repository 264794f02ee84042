/** Counts requests from arrival until completely over, so shutdown can wait for them. */
export class InFlightRequests {
  private active = 0;
  private waiters: (() => void)[] = [];

  get count(): number {
    return this.active;
  }

  start(): void {
    this.active += 1;
  }

  end(): void {
    this.active = Math.max(0, this.active - 1);
    if (this.active === 0) {
      for (const wake of this.waiters.splice(0)) wake();
    }
  }

  /** Resolves true once nothing is in flight, false if `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.active === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== wake);
        resolve(false);
      }, timeoutMs);
      const wake = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(wake);
    });
  }
}
