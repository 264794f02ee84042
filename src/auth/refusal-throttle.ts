import type { Socket } from 'node:net';
import type { RefusalThrottleSettings } from './auth-settings.js';
import { HeldRefusals } from './refusal-delay.js';

/** What becomes of one credential refusal on its client connection. */
export interface RefusalTreatment {
  /** How long to hold the answer back, its connection's reading paused (0: answered at once). */
  readonly delayMs: number;
  /** Whether the connection closes after the answer. */
  readonly close: boolean;
}

export const AT_ONCE: RefusalTreatment = Object.freeze({ delayMs: 0, close: false });

/** Doubling stops here: a longer shift would overflow long before any sensible cap. */
const MAX_DOUBLINGS = 30;

/**
 * The treatment of the `streak`-th credential refusal in a row on one connection: the first
 * `delayAfter` at once, then delays from `delayMs` doubling up to `delayMaxMs`, and the connection
 * closed after the `closeAfter`-th. What authentication front-ends do to a client that keeps
 * failing (Postfix's growing error sleep and hard error limit, OpenSSH's MaxAuthTries,
 * HAProxy's tarpit), kept per connection so that other connections are never slowed.
 */
export function treatmentOf(streak: number, settings: RefusalThrottleSettings): RefusalTreatment {
  const close = settings.closeAfter > 0 && streak >= settings.closeAfter;
  const beyond = streak - settings.delayAfter;
  if (beyond <= 0 || settings.delayMaxMs === 0) return close ? { delayMs: 0, close } : AT_ONCE;
  const delayMs = Math.min(settings.delayMs * 2 ** Math.min(beyond - 1, MAX_DOUBLINGS), settings.delayMaxMs);
  return { delayMs, close };
}

/** What the throttle reports (metrics). */
export interface RefusalThrottleEvents {
  throttled(treatment: RefusalTreatment): void;
}

/**
 * Credential refusals in a row, per client connection. A connection is any object that stays
 * the same for the connection's life (its socket); the count goes with it when it is collected,
 * so the memory is that of the open connections.
 */
export class RefusalThrottle {
  private readonly streaks = new WeakMap<object, number>();
  private readonly held = new HeldRefusals();

  constructor(
    private readonly settings: () => RefusalThrottleSettings,
    private readonly events: RefusalThrottleEvents,
  ) {}

  /** One more refusal on `connection`: how to answer it (at once when there is no connection to count on). */
  refused(connection: object | undefined): RefusalTreatment {
    if (connection === undefined) return AT_ONCE;
    const streak = (this.streaks.get(connection) ?? 0) + 1;
    this.streaks.set(connection, streak);
    const treatment = treatmentOf(streak, this.settings());
    if (treatment !== AT_ONCE) this.events.throttled(treatment);
    return treatment;
  }

  /** Resolves when a refusal treated so may be answered on `socket` (at once, or after its delay). */
  delay(socket: Socket | undefined, treatment: RefusalTreatment): Promise<void> {
    return this.held.hold(socket, treatment.delayMs);
  }

  /** Shutdown: every refusal held back is answered now, and none is held after. */
  stop(): void {
    this.held.releaseAll();
  }

  /** Credentials accepted on `connection`: its run of refusals is over. */
  accepted(connection: object | undefined): void {
    if (connection !== undefined) this.streaks.delete(connection);
  }
}
