import type { Socket } from 'node:net';

/**
 * Throttled refusals being held back. Each waits its delay with its connection's reading paused:
 * whatever else the client sends stays in the kernel's buffers (TCP pushes back) instead of being
 * parsed and queued here, so a held refusal costs one timer and nothing more. A paused connection
 * does not notice its client leaving, so the delay is what bounds the hold; `releaseAll` answers
 * them all at once (shutdown) and holds none after.
 */
export class HeldRefusals {
  private readonly pending = new Set<() => void>();
  private released = false;

  hold(socket: Socket | undefined, delayMs: number): Promise<void> {
    if (socket === undefined || delayMs <= 0 || this.released || socket.destroyed) return Promise.resolve();
    socket.pause();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        socket.off('close', done);
        this.pending.delete(done);
        if (!socket.destroyed) socket.resume();
        resolve();
      };
      const timer = setTimeout(done, delayMs);
      socket.once('close', done);
      this.pending.add(done);
    });
  }

  /** Held refusals now (tests, metrics). */
  get size(): number {
    return this.pending.size;
  }

  releaseAll(): void {
    this.released = true;
    for (const done of [...this.pending]) done();
  }
}
