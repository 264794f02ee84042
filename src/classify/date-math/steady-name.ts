import { DateMathError } from './date-math-error.js';
import { isDateMathName, resolveDateMathName } from './date-math-index-name.js';

/**
 * How far the proxy allows the cluster's clock to be from its own when it evaluates date math:
 * Elasticsearch evaluates a date-math name on the coordinating node's clock when the write arrives
 * there, the proxy on its own clock before it locks. Clocks kept by NTP are within milliseconds.
 */
export const CLOCK_MARGIN_MS = 1000;

/**
 * The concrete name of `name` at `nowMs` when it is the same at every instant within `marginMs`
 * of it — the name Elasticsearch resolves too, whatever its clock within the margin; null when a
 * boundary of the name (a day's end for `{now/d}`) lies within the margin. Names without date math
 * are steady. Throws DateMathError as `resolveDateMathName` does.
 */
export function steadyName(name: string, nowMs: number, marginMs: number): string | null {
  const resolved = resolveDateMathName(name, nowMs);
  if (!isDateMathName(name)) return resolved;
  return resolveDateMathName(name, nowMs - marginMs) === resolved && resolveDateMathName(name, nowMs + marginMs) === resolved ? resolved : null;
}

/**
 * The steady concrete name of `name`: at once, or after waiting out a boundary (at most
 * `2 × marginMs`). A name that changes again within that time (one with seconds in it) is refused:
 * no key would be the one Elasticsearch writes.
 */
export async function settledName(name: string, clock: () => number, marginMs: number, wait: (ms: number) => Promise<void>): Promise<string> {
  const now = steadyName(name, clock(), marginMs);
  if (now !== null) return now;
  await wait(2 * marginMs);
  const later = steadyName(name, clock(), marginMs);
  if (later !== null) return later;
  throw DateMathError.unsupported(`date-math index name [${name}] changes within ${marginMs} ms of the proxy's clock: the proxy cannot tell which index the cluster's clock picks`);
}
