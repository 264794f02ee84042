/**
 * The figure each target judges, where one of `BENCH_FIGURES` measures the same value: the targets
 * table then shows the figure's median over the runs kept beside the latest run's value, both
 * labelled, so one figure never appears with two unlabelled values. Keyed by the target's goal text
 * (a workload's own words); a test checks every goal still exists and both values agree.
 */
export const TARGET_FIGURES: Readonly<Record<string, string>> = {
  'search CPU per request <= 1.3x the bare proxy': 'search_cpu_vs_bare',
  'passthrough throughput >= 0.9x the bare proxy': 'search_throughput_vs_bare',
  'passthrough throughput >= 0.9x direct': 'search_throughput_vs_direct',
  'uncontended locked write CPU <= 2.5x the bare proxy passing the same write': 'write_cpu_vs_bare',
  'uncontended locked write CPU at 16 connections <= 2.5x the bare proxy at 16': 'write_cpu_vs_bare_16',
  'write-uncontended throughput >= 0.8x the bare proxy': 'write_throughput_vs_bare',
  'write-uncontended throughput >= 0.95x the bare proxy with the least ZooKeeper lock': 'write_throughput_vs_least_lock',
  'write-uncontended throughput >= 0.8x direct': 'write_throughput_vs_direct',
  'open loop: search added p50 <= 0.3 ms': 'search_added_p50_ms',
  'open loop: search added p99 <= 2 ms': 'search_added_p99_ms',
  'open loop: write added p50 <= 1 ms': 'write_added_p50_ms',
  'open loop: write added p99 <= 3 ms': 'write_added_p99_ms',
  'write-hot one proxy >= 0.8x the perfect lock': 'hot_one_proxy_vs_perfect',
  'write-hot two proxies >= 0.8x the perfect lock': 'hot_two_proxies_vs_perfect',
  'fg p99 lock wait under a bg flood <= 2x one bg hold (p50)': 'fg_wait_p99_vs_bg_hold',
  'bulk of 1,000 docs <= 1.5x direct (p50 time)': 'bulk_time_vs_direct',
  'bulk <= 0.1 ZooKeeper transactions per document (server zxid)': 'bulk_zk_transactions_per_doc',
  'foreground writes during bulks: p99 <= 2x one bulk direct (p50)': 'bulk_fg_p99_vs_direct_bulk',
  '4 streams of 500-doc bulks with ids >= 0.85x the ZooKeeper floor (documents/s)': 'streams_vs_floor',
  '4 streams of 500-doc bulks with ids >= 0.85x the least ZooKeeper lock for bulks (documents/s, same machine share)': 'streams_vs_least_lock',
  'one 1,000-doc bulk at a time <= 1.5x direct (p50 time)': 'streams_single_bulk_vs_direct',
  '4 streams of bulks without ids >= 0.95x direct (documents/s)': 'streams_no_ids_vs_direct',
  'lock cold p50 <= 0.7x Curator (release awaited)': 'lock_cold_p50_vs_curator',
  'lock warm p50 <= 0.7x Curator (release awaited)': 'lock_warm_p50_vs_curator',
  'lock warm p50 <= 0.7x Curator (ours pipelined)': 'lock_warm_pipelined_p50_vs_curator',
  'lock hot (2 sessions x 4) throughput >= 1.2x Curator': 'lock_hot_vs_curator',
  'lock hot (8 sessions x 1) throughput >= 1.2x Curator': 'lock_hot_8x1_vs_curator',
};
