import type { ServerResponse } from 'node:http';
import type { CancelSignal } from '../lock/lock-engine.js';

/**
 * Aborts when the client connection closes before its response was completely sent. It is an
 * `AbortSignal` in all a wait needs (`CancelSignal`) without an AbortController per request:
 * Node's AbortSignal is an EventTarget, and making one for every write was about 2% of the
 * proxy's CPU per locked write in a profile of `write-uncontended`, for a signal that almost
 * never fires. Listeners run once, in the order added, like `{ once: true }` abort listeners (the
 * waits' listeners do not throw; unlike an EventTarget, one that did would stop those after it).
 */
export class ClientGone implements CancelSignal {
  private gone: Error | null = null;
  private listeners: (() => void)[] = [];

  constructor(res: ServerResponse) {
    res.once('close', () => {
      if (!res.writableFinished) this.abort(new Error('client closed the connection'));
    });
  }

  get aborted(): boolean {
    return this.gone !== null;
  }

  get reason(): Error | undefined {
    return this.gone ?? undefined;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.gone === null) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.listeners.indexOf(listener);
    if (index >= 0) this.listeners.splice(index, 1);
  }

  private abort(reason: Error): void {
    this.gone = reason;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}
