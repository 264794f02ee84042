import { summaryValue, type BenchReport } from './bench-report.js';

/**
 * The figures the documentation quotes, each read from one run's report. Their ids are the columns
 * of `bench/results/history.csv`, so a figure keeps its column for as long as it exists: add new
 * ones at the end, never rename one.
 */
export interface BenchFigure {
  readonly id: string;
  readonly section: FigureSection;
  readonly label: string;
  /** `x` for a ratio, `ms` for a duration, `` for a count. */
  readonly unit: 'x' | 'ms' | '';
  readonly read: (report: BenchReport) => number | null;
}

/** Which way a figure is better, said beside it wherever it is shown; null for a check or a reference. */
export type Better = 'higher' | 'lower' | null;

/** Figures with no better direction: a check that the oracle sees races, and a reference's own wait. */
const NO_DIRECTION: ReadonlySet<string> = new Set(['direct_overlaps', 'fifo_wait_p99_ms']);

/**
 * Throughput and documents per second are better higher; CPU, time, latency, waits, transactions and
 * overlaps better lower. Read from the figure's id so that a new figure cannot be left without one.
 */
export function betterOf(figure: BenchFigure): Better {
  if (NO_DIRECTION.has(figure.id)) return null;
  if (/cpu|_ms$|time|p50|p99|single_bulk|transactions|overlaps|violations/.test(figure.id)) return 'lower';
  if (/throughput|perfect|streams_|lock_hot|lock_spread/.test(figure.id)) return 'higher';
  throw new Error(`bench figure ${figure.id} has no direction: name it or list it in NO_DIRECTION`);
}

export type FigureSection = 'safety' | 'edge' | 'open loop' | 'hot documents' | 'priority' | 'bulk' | 'fencing' | 'lock engine';

const of = (workload: string, key: string) => (report: BenchReport) => summaryValue(report, workload, key);

function quotient(numerator: (report: BenchReport) => number | null, denominator: (report: BenchReport) => number | null) {
  return (report: BenchReport): number | null => {
    const top = numerator(report);
    const bottom = denominator(report);
    return top === null || bottom === null || bottom === 0 ? null : top / bottom;
  };
}

export const BENCH_FIGURES: readonly BenchFigure[] = [
  { id: 'direct_overlaps', section: 'safety', label: 'overlapping writes straight to the stand-in (the check can see a race)', unit: '', read: of('write-hot', 'direct_overlaps') },
  { id: 'proxy_overlaps', section: 'safety', label: 'overlapping writes through one proxy', unit: '', read: of('write-hot', 'proxy_overlaps') },
  { id: 'two_proxies_overlaps', section: 'safety', label: 'overlapping writes through two proxies', unit: '', read: of('write-hot', 'two_proxies_overlaps') },
  { id: 'lock_violations', section: 'safety', label: 'mutual-exclusion violations in the lock benchmark', unit: '', read: lockViolations },
  { id: 'search_cpu_vs_bare', section: 'edge', label: 'search: CPU per request ÷ the bare proxy', unit: 'x', read: of('passthrough', 'cpu_ratio_vs_bare') },
  { id: 'search_throughput_vs_bare', section: 'edge', label: 'search: throughput ÷ the bare proxy', unit: 'x', read: of('passthrough', 'throughput_ratio_vs_bare') },
  { id: 'search_throughput_vs_direct', section: 'edge', label: 'search: throughput ÷ straight to the cluster', unit: 'x', read: of('passthrough', 'throughput_ratio') },
  { id: 'write_cpu_vs_bare', section: 'edge', label: 'uncontended locked write: CPU ÷ the bare proxy', unit: 'x', read: of('write-uncontended', 'cpu_ratio_vs_bare') },
  { id: 'write_throughput_vs_bare', section: 'edge', label: 'uncontended locked write: throughput ÷ the bare proxy', unit: 'x', read: of('write-uncontended', 'throughput_ratio_vs_bare') },
  { id: 'least_lock_throughput_vs_bare', section: 'edge', label: 'the least ZooKeeper lock: throughput ÷ the bare proxy', unit: 'x', read: of('write-uncontended', 'bare_zk_lock_throughput_ratio_vs_bare') },
  { id: 'write_throughput_vs_least_lock', section: 'edge', label: 'uncontended locked write: throughput ÷ the least ZooKeeper lock', unit: 'x', read: of('write-uncontended', 'throughput_ratio_vs_bare_zk_lock') },
  { id: 'in_process_throughput_vs_bare', section: 'edge', label: 'uncontended write on the in-process lock: throughput ÷ the bare proxy', unit: 'x', read: of('write-uncontended', 'in_process_lock_throughput_ratio_vs_bare') },
  { id: 'write_throughput_vs_direct', section: 'edge', label: 'uncontended locked write: throughput ÷ straight to the cluster', unit: 'x', read: of('write-uncontended', 'throughput_ratio') },
  { id: 'bare_search_throughput_vs_direct', section: 'edge', label: 'the bare proxy, search: throughput ÷ straight to the cluster', unit: 'x', read: quotient(of('passthrough', 'bare_rps'), of('passthrough', 'direct_rps')) },
  { id: 'bare_write_throughput_vs_direct', section: 'edge', label: 'the bare proxy, write: throughput ÷ straight to the cluster', unit: 'x', read: quotient(of('write-uncontended', 'bare_rps'), of('write-uncontended', 'direct_rps')) },
  { id: 'zk_cpu_per_write_ms', section: 'edge', label: "ZooKeeper server's CPU per uncontended locked write", unit: 'ms', read: of('write-uncontended', 'zk_server_cpu_ms_per_write') },
  { id: 'least_lock_zk_cpu_per_write_ms', section: 'edge', label: "ZooKeeper server's CPU per write of the least ZooKeeper lock", unit: 'ms', read: of('write-uncontended', 'bare_zk_lock_zk_server_cpu_ms_per_write') },
  { id: 'search_added_p50_ms', section: 'open loop', label: 'search at 200/s: added p50', unit: 'ms', read: of('open-loop', 'search_added_p50_ms') },
  { id: 'search_added_p99_ms', section: 'open loop', label: 'search at 200/s: added p99', unit: 'ms', read: of('open-loop', 'search_added_p99_ms') },
  { id: 'write_added_p50_ms', section: 'open loop', label: 'locked write at 200/s: added p50', unit: 'ms', read: of('open-loop', 'write_added_p50_ms') },
  { id: 'write_added_p99_ms', section: 'open loop', label: 'locked write at 200/s: added p99', unit: 'ms', read: of('open-loop', 'write_added_p99_ms') },
  { id: 'least_lock_write_added_p50_ms', section: 'open loop', label: 'the least ZooKeeper lock at 200/s: added p50', unit: 'ms', read: of('open-loop', 'bare_zk_lock_write_added_p50_ms') },
  { id: 'least_lock_write_added_p99_ms', section: 'open loop', label: 'the least ZooKeeper lock at 200/s: added p99', unit: 'ms', read: of('open-loop', 'bare_zk_lock_write_added_p99_ms') },
  { id: 'hot_one_proxy_vs_perfect', section: 'hot documents', label: '8 hot documents, one proxy: throughput ÷ a perfect lock', unit: 'x', read: of('write-hot', 'proxy_vs_perfect') },
  { id: 'hot_two_proxies_vs_perfect', section: 'hot documents', label: '8 hot documents, two proxies: throughput ÷ a perfect lock', unit: 'x', read: of('write-hot', 'two_proxies_vs_perfect') },
  { id: 'fg_wait_p99_ms', section: 'priority', label: 'foreground lock wait p99 under a background flood', unit: 'ms', read: of('fg-under-bg', 'fg_wait_p99_ms') },
  { id: 'fg_wait_p99_vs_bg_hold', section: 'priority', label: 'the same ÷ one background hold (p50)', unit: 'x', read: quotient(of('fg-under-bg', 'fg_wait_p99_ms'), of('fg-under-bg', 'bg_hold_p50_ms')) },
  { id: 'fifo_wait_p99_ms', section: 'priority', label: 'the same load in arrival order (a FIFO lock): lock wait p99', unit: 'ms', read: of('fg-under-bg', 'fifo_wait_p99_ms') },
  { id: 'bulk_time_vs_direct', section: 'bulk', label: 'bulk of 1,000 documents: time ÷ straight to the cluster (p50)', unit: 'x', read: of('bulk', 'bulk_time_ratio') },
  { id: 'bulk_zk_transactions_per_doc', section: 'bulk', label: 'ZooKeeper transactions per document written', unit: '', read: of('bulk', 'zk_transactions_per_doc') },
  { id: 'bulk_fg_p99_vs_direct_bulk', section: 'bulk', label: 'foreground writes to the same ids meanwhile: p99 ÷ one direct bulk (p50)', unit: 'x', read: quotient(of('bulk', 'proxy_fg_p99_ms'), of('bulk', 'direct_bulk_p50_ms')) },
  { id: 'bulk_proxy_cpu_ms', section: 'bulk', label: "the proxy's CPU per bulk", unit: 'ms', read: of('bulk', 'proxy_cpu_ms_per_bulk') },
  { id: 'bulk_zk_cpu_ms', section: 'bulk', label: "ZooKeeper server's CPU per bulk", unit: 'ms', read: of('bulk', 'zk_server_cpu_ms_per_bulk') },
  { id: 'fencing_write_throughput', section: 'fencing', label: 'fencing on ÷ off: uncontended write throughput', unit: 'x', read: of('fencing', 'write_throughput_ratio') },
  { id: 'fencing_write_added_p50_ms', section: 'fencing', label: 'fencing on − off: uncontended write p50', unit: 'ms', read: of('fencing', 'write_added_p50_ms') },
  { id: 'fencing_bulk_time', section: 'fencing', label: 'fencing on ÷ off: bulk time (p50)', unit: 'x', read: of('fencing', 'bulk_time_ratio') },
  { id: 'lock_cold_p50_vs_curator', section: 'lock engine', label: 'new key, release awaited: p50 ÷ Curator', unit: 'x', read: quotient(of('lock', 'ours_cold_p50_ms'), of('lock', 'curator_cold_p50_ms')) },
  { id: 'lock_warm_p50_vs_curator', section: 'lock engine', label: 'same key again, release awaited: p50 ÷ Curator', unit: 'x', read: quotient(of('lock', 'ours_warm_p50_ms'), of('lock', 'curator_warm_p50_ms')) },
  { id: 'lock_warm_pipelined_p50_vs_curator', section: 'lock engine', label: 'same key again, release pipelined as the proxy does: p50 ÷ Curator', unit: 'x', read: quotient(of('lock', 'ours_warm_pipelined_p50_ms'), of('lock', 'curator_warm_p50_ms')) },
  { id: 'lock_hot_vs_curator', section: 'lock engine', label: 'one hot key, 2 sessions × 4 workers: throughput ÷ Curator', unit: 'x', read: quotient(of('lock', 'ours_hot_ops_per_s'), of('lock', 'curator_hot_ops_per_s')) },
  { id: 'lock_hot_8x1_vs_curator', section: 'lock engine', label: 'one hot key, 8 sessions × 1 worker: throughput ÷ Curator', unit: 'x', read: quotient(of('lock', 'ours_hot_8x1_ops_per_s'), of('lock', 'curator_hot_8x1_ops_per_s')) },
  { id: 'lock_spread_vs_curator', section: 'lock engine', label: '10,000 keys, 4 sessions × 8 workers: throughput ÷ Curator', unit: 'x', read: quotient(of('lock', 'ours_spread_ops_per_s'), of('lock', 'curator_spread_ops_per_s')) },
  { id: 'streams_vs_floor', section: 'bulk', label: '4 streams of 500-doc bulks with ids: documents/s ÷ the ZooKeeper floor', unit: 'x', read: of('bulk-streams', 'proxy_vs_zk_floor') },
  { id: 'streams_least_lock_vs_floor', section: 'bulk', label: 'the same through the least ZooKeeper lock for bulks ÷ the ZooKeeper floor', unit: 'x', read: of('bulk-streams', 'least_lock_vs_zk_floor') },
  { id: 'streams_vs_least_lock', section: 'bulk', label: '4 streams with ids: the proxy ÷ the least ZooKeeper lock for bulks', unit: 'x', read: of('bulk-streams', 'proxy_vs_least_lock') },
  { id: 'streams_vs_direct', section: 'bulk', label: '4 streams with ids: documents/s ÷ straight to the cluster', unit: 'x', read: of('bulk-streams', 'proxy_vs_direct') },
  { id: 'streams_cpu_per_doc_vs_bare', section: 'bulk', label: "4 streams with ids: the proxy's CPU per document ÷ the bare proxy's", unit: 'x', read: of('bulk-streams', 'cpu_per_doc_ratio_vs_bare') },
  { id: 'streams_single_bulk_vs_direct', section: 'bulk', label: 'one 1,000-doc bulk at a time: time ÷ straight to the cluster (p50)', unit: 'x', read: of('bulk-streams', 'single_time_ratio') },
  { id: 'streams_no_ids_vs_direct', section: 'bulk', label: '4 streams without ids: documents/s ÷ straight to the cluster', unit: 'x', read: of('bulk-streams', 'no_ids_vs_direct') },
  { id: 'least_lock_cpu_vs_bare', section: 'edge', label: 'the least ZooKeeper lock: CPU per write ÷ the bare proxy', unit: 'x', read: of('write-uncontended', 'bare_zk_lock_cpu_ratio_vs_bare') },
  { id: 'write_cpu_vs_bare_16', section: 'edge', label: 'uncontended locked write at 16 connections: CPU ÷ the bare proxy', unit: 'x', read: of('write-uncontended', 'moderate_cpu_ratio_vs_bare') },
  { id: 'least_lock_cpu_vs_bare_16', section: 'edge', label: 'the least ZooKeeper lock at 16 connections: CPU per write ÷ the bare proxy', unit: 'x', read: of('write-uncontended', 'moderate_bare_zk_lock_cpu_ratio_vs_bare') },
];

function lockViolations(report: BenchReport): number | null {
  const summary = report.workloads['lock']?.summary;
  if (summary === undefined) return null;
  const counts = Object.entries(summary).filter(([key, value]) => key.endsWith('_violations') && typeof value === 'number');
  return counts.length === 0 ? null : counts.reduce((sum, [, value]) => sum + (value ?? 0), 0);
}

export function figureById(id: string): BenchFigure {
  const figure = BENCH_FIGURES.find((candidate) => candidate.id === id);
  if (figure === undefined) throw new Error(`no bench figure ${id}`);
  return figure;
}

/** Every figure of one report, by id (null where that run did not measure it). */
export function figuresOf(report: BenchReport): Record<string, number | null> {
  return Object.fromEntries(BENCH_FIGURES.map((figure) => [figure.id, figure.read(report)]));
}
