import { Agent } from 'node:http';
import { exchangeStatus } from './http-exchange.js';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadResult, type LoadResult, type LoadSpec } from './load-spec.js';

/**
 * An open loop at an even pace: request i is sent at start + i / rate, whatever the answers
 * before it are doing. autocannon's `overallRate` is not that: each of its connections sends
 * its share of a second back to back at the start of every second, so "200/s over 16
 * connections" is a burst of 16 concurrent closed loops once a second, which measures queueing
 * under load rather than what a request costs on a quiet machine.
 *
 * Sockets are not limited (`connections` is ignored): an open loop never waits for a free
 * connection, so a request's latency is measured from the moment it is sent.
 */
export async function runPacedLoad(spec: LoadSpec, ratePerS: number): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true });
  const counts = { ok: 0, non2xx: 0, errors: 0 };
  const latencies: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  void spec.stopWhen?.finally(() => {
    stopped = true;
  });
  const started = performance.now();
  const deadline = started + spec.durationS * 1000;
  for (let sent = 0; !stopped && sent < (spec.amount ?? Infinity); sent++) {
    await untilDue(started, sent, ratePerS);
    if (stopped || performance.now() >= deadline) break;
    const answered = send(agent, spec).then(
      ({ status, latencyMs }) => {
        if (status >= 200 && status < 300) {
          counts.ok++;
          latencies.push(latencyMs);
        } else counts.non2xx++;
      },
      () => {
        counts.errors++;
      },
    );
    inFlight.add(answered);
    void answered.finally(() => inFlight.delete(answered));
  }
  await Promise.all(inFlight);
  agent.destroy();
  return loadResult(latencies, counts, (performance.now() - started) / 1000);
}

async function send(agent: Agent, spec: LoadSpec): Promise<{ status: number; latencyMs: number }> {
  const body = spec.body?.() ?? '';
  const url = new URL(spec.pathFor(), spec.baseUrl);
  const sentAt = performance.now();
  const status = await exchangeStatus(agent, url, spec.method, { 'content-type': 'application/json', ...spec.headers }, body);
  return { status, latencyMs: performance.now() - sentAt };
}

/** Waits until the `index`-th of a series paced at `ratePerS` from `startedAt` is due. */
export async function untilDue(startedAt: number, index: number, ratePerS: number): Promise<void> {
  const wait = startedAt + (index * 1000) / ratePerS - performance.now();
  if (wait > 0) await sleep(wait);
}
