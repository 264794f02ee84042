import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROXY_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { numberField, spawnBenchChild } from '../child-process.js';
import { runLoad, type LoadResult, type LoadSpec } from '../load.js';
import { BULK_CONNECTIONS, BULK_SIZE, bulkBodies, bulkCount, bulkDocsPerS } from './bulk.js';
import { cycle, measured, round, type Workload, type WorkloadContext } from '../workload-result.js';

const INDEX = 'bench-fencing';
const DOCUMENTS = 100_000;
const CONNECTIONS = 32;
/** Ids of the bulks: a pool small enough that most documents exist after the first bulks (reads find them). */
const BULK_POOL = 10_000;

/**
 * The cost of proxy.fencing=on: the environment's proxy (fencing off) against a second
 * proxy process started here with fencing on, same ZooKeeper, same stand-in, in the same run —
 * uncontended single writes (one realtime GET per write) and 1,000-document bulks (one `_mget`
 * per sub-bulk, the body rewritten and never streamed).
 */
export const fencing: Workload = async (context) => {
  const { env, options } = context;
  const deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-bench-fencing-'));
  const fenced = await spawnBenchChild(
    './proxy-process.ts',
    { zookeeper: env.zookeeper, lockRoot: `/es-lock-proxy-bench/fencing-${Date.now().toString(36)}`, upstream: env.directUrl, deadLetterDir, fencing: 'on' },
    (line) => ({ proxyPort: numberField(line, 'proxyPort') }),
    PROXY_NODE_FLAGS,
  );
  try {
    const fencedUrl = `http://127.0.0.1:${fenced.info.proxyPort}`;
    const writesOff = await measured(context, writes(context, env.proxyUrl, 'off'));
    const writesOn = await measured(context, writes(context, fencedUrl, 'on'));
    const bulksOff = await bulks(context, env.proxyUrl);
    const bulksOn = await bulks(context, fencedUrl);
    return {
      workload: 'fencing',
      summary: {
        write_off_rps: round(writesOff.rps, 0),
        write_on_rps: round(writesOn.rps, 0),
        write_throughput_ratio: round(writesOn.rps / writesOff.rps),
        write_off_p50_ms: round(writesOff.p50Ms),
        write_on_p50_ms: round(writesOn.p50Ms),
        write_added_p50_ms: round(writesOn.p50Ms - writesOff.p50Ms),
        bulk_off_p50_ms: round(bulksOff.p50Ms),
        bulk_on_p50_ms: round(bulksOn.p50Ms),
        bulk_time_ratio: round(bulksOn.p50Ms / bulksOff.p50Ms),
        bulk_off_docs_per_s: round(bulkDocsPerS(bulksOff), 0),
        bulk_on_docs_per_s: round(bulkDocsPerS(bulksOn), 0),
        non2xx: [writesOff, writesOn, bulksOff, bulksOn].reduce((sum, run) => sum + run.non2xx + run.errors, 0),
      },
      runs: { writes_off: writesOff, writes_on: writesOn, bulks_off: bulksOff, bulks_on: bulksOn },
      targets: [],
      notes: [
        `fencing off = the environment's proxy, on = a second proxy process with proxy.fencing=on (same ZooKeeper and stand-in); PUT /${INDEX}/_doc/{id} over ${DOCUMENTS} ids, ${CONNECTIONS} connections; bulks of ${BULK_SIZE} index actions (consecutive ids from a pool of ${BULK_POOL}) over ${BULK_CONNECTIONS} connections; stand-in read time ${options.readMs} ms per read (GET or _mget)`,
      ],
    };
  } finally {
    await fenced.stop();
    await rm(deadLetterDir, { recursive: true, force: true });
  }
};

function writes(context: WorkloadContext, baseUrl: string, run: string): LoadSpec {
  const next = cycle(DOCUMENTS);
  return {
    baseUrl,
    connections: CONNECTIONS,
    durationS: context.options.durationS,
    method: 'PUT',
    pathFor: () => `/${INDEX}/_doc/${run}-${next()}`,
    body: () => '{"field":"value","n":1}',
  };
}

/** A fixed number of bulks (about 2 per second of --duration), after as many unmeasured ones as connections. */
async function bulks(context: WorkloadContext, baseUrl: string): Promise<LoadResult> {
  const spec: LoadSpec = {
    baseUrl,
    connections: BULK_CONNECTIONS,
    durationS: 600,
    method: 'POST',
    pathFor: () => '/_bulk',
    body: bulkBodies(INDEX, BULK_POOL),
    headers: { 'content-type': 'application/x-ndjson' },
  };
  if (context.options.warmupS > 0) await runLoad({ ...spec, amount: BULK_CONNECTIONS });
  return runLoad({ ...spec, amount: bulkCount(context.options.durationS) });
}
