import type { Socket } from 'node:net';

/** The refusals held on one connection, and what ends them all when it closes. */
interface HeldConnection {
  readonly waiting: Set<() => void>;
  readonly onClose: () => void;
}

/**
 * Throttled refusals being held back. Each waits its delay with its connection's reading paused:
 * whatever else the client sends stays in the kernel's buffers (TCP pushes back) instead of being
 * parsed and queued here, so a held refusal costs one timer and nothing more. Refusals already
 * parsed from one connection (pipelined) are held together: the connection is paused once and
 * read again when the last of them is answered. A paused connection does not notice its client
 * leaving, so the delay is what bounds the hold; `releaseAll` answers them all at once
 * (shutdown) and holds none after.
 */
export class HeldRefusals {
  private readonly connections = new Map<Socket, HeldConnection>();
  private released = false;

  hold(socket: Socket | undefined, delayMs: number): Promise<void> {
    if (socket === undefined || delayMs <= 0 || this.released || socket.destroyed) return Promise.resolve();
    const held = this.connections.get(socket) ?? this.pause(socket);
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        held.waiting.delete(done);
        if (held.waiting.size === 0) this.resume(socket, held);
        resolve();
      };
      const timer = setTimeout(done, delayMs);
      held.waiting.add(done);
    });
  }

  /** Refusals held now (tests). */
  get size(): number {
    let count = 0;
    for (const held of this.connections.values()) count += held.waiting.size;
    return count;
  }

  releaseAll(): void {
    this.released = true;
    for (const held of [...this.connections.values()]) held.onClose();
  }

  private pause(socket: Socket): HeldConnection {
    const waiting = new Set<() => void>();
    const held: HeldConnection = { waiting, onClose: () => [...waiting].forEach((done) => done()) };
    this.connections.set(socket, held);
    socket.pause();
    socket.once('close', held.onClose);
    return held;
  }

  private resume(socket: Socket, held: HeldConnection): void {
    this.connections.delete(socket);
    socket.off('close', held.onClose);
    if (!socket.destroyed) socket.resume();
  }
}
