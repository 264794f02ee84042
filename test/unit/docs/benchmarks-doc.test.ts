import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { format, withBlocks, blockStart, blockEnd } from '../../../bench/docs/bench-doc-blocks.js';
import { benchDocOutputs, BENCH_PATHS } from '../../../bench/docs/bench-docs.js';
import { BENCH_FIGURES, betterOf, figureById } from '../../../bench/docs/bench-figures.js';
import { TARGET_FIGURES } from '../../../bench/docs/target-figures.js';
import { formatHistory, historyRowOf, keptRuns, parseHistory, RUNS_KEPT, statsOf, withRun } from '../../../bench/docs/bench-history.js';
import { parseBenchReport, type BenchReport } from '../../../bench/docs/bench-report.js';
import { renderCharts } from '../../../bench/docs/bench-charts.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const latest = (): BenchReport => parseBenchReport(readFileSync(`${REPO}${BENCH_PATHS.latest}`, 'utf8'), BENCH_PATHS.latest);

function reportWith(generatedAt: string, ratio: number): BenchReport {
  const report = latest();
  const uncontended = report.workloads['write-uncontended'];
  if (uncontended === undefined) throw new Error('latest.json has no write-uncontended');
  return {
    ...report,
    generatedAt,
    workloads: { ...report.workloads, 'write-uncontended': { ...uncontended, summary: { ...uncontended.summary, throughput_ratio_vs_bare: ratio } } },
  };
}

describe('the generated benchmark documentation', () => {
  it('is current with bench/results/latest.json and history.csv (regenerate with `npm run docs:bench`)', () => {
    const outputs = benchDocOutputs(REPO, () => {
      throw new Error('history.csv has no row for latest.json: run `npm run docs:bench`');
    });
    expect([...outputs.keys()]).toEqual(expect.arrayContaining([BENCH_PATHS.doc, BENCH_PATHS.readme, BENCH_PATHS.history, 'docs/benchmarks/throughput-ratios.svg']));
    for (const [path, content] of outputs) {
      expect(readFileSync(`${REPO}${path}`, 'utf8'), path).toBe(content);
    }
  });

  it('keeps docs/benchmarks.md within 300 lines', () => {
    expect(readFileSync(`${REPO}${BENCH_PATHS.doc}`, 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('quotes in the README headline the medians of the runs kept in history.csv, the latest run among them', () => {
    const readme = readFileSync(`${REPO}README.md`, 'utf8');
    const headline = readme.slice(readme.indexOf(blockStart('headline')), readme.indexOf(blockEnd('headline')));
    const kept = keptRuns(parseHistory(readFileSync(`${REPO}${BENCH_PATHS.history}`, 'utf8')));
    expect(kept.at(-1)?.figures['hot_one_proxy_vs_perfect']).toBe(latest().workloads['write-hot']?.summary['proxy_vs_perfect']);
    const median = (id: string): number => statsOf(kept, id)?.median ?? NaN;
    expect(headline).toContain(`${format(median('hot_one_proxy_vs_perfect'), 'x')}`);
    expect(headline).toContain(format(median('fencing_bulk_time'), 'x'));
  });
});

describe('one value and one direction per figure', () => {
  it('pairs each target only with a figure that measures the same value in the same run', () => {
    const report = latest();
    const goals = new Map(Object.values(report.workloads).flatMap((workload) => workload.targets.map((target) => [target.goal, target.value] as const)));
    for (const [goal, id] of Object.entries(TARGET_FIGURES)) {
      expect(goals.has(goal), goal).toBe(true);
      const value = goals.get(goal);
      const measured = figureById(id).read(report);
      expect(value, goal).not.toBeNull();
      expect(measured, id).not.toBeNull();
      expect(Math.abs((measured ?? NaN) - (value ?? NaN)), `${goal} against ${id}`).toBeLessThan(0.0015);
    }
  });

  it('says of every figure which way is better, except the race check and the FIFO reference', () => {
    const none = BENCH_FIGURES.filter((figure) => betterOf(figure) === null).map((figure) => figure.id);
    expect(none).toEqual(['direct_overlaps', 'fifo_wait_p99_ms']);
    expect(betterOf(figureById('streams_single_bulk_vs_direct'))).toBe('lower');
    expect(betterOf(figureById('bulk_time_vs_direct'))).toBe('lower');
    expect(betterOf(figureById('streams_vs_least_lock'))).toBe('higher');
  });

  it('draws no chart series in the targets\' red, and labels every run of the trend apart', () => {
    const kept = keptRuns(parseHistory(readFileSync(`${REPO}${BENCH_PATHS.history}`, 'utf8')));
    const charts = renderCharts(latest(), kept);
    const trend = charts.find((chart) => chart.file === 'ratio-trend.svg')?.svg ?? '';
    expect(trend).not.toMatch(/(?:stroke|fill)="#cf222e"/);
    const runLabels = [...trend.matchAll(/>run (\d+)</g)].map((match) => match[1]);
    expect(new Set(runLabels).size).toBe(kept.length);
  });
});

describe('history.csv', () => {
  it('adds a run once, and reads back what it wrote', () => {
    const first = historyRowOf(reportWith('2026-01-01T00:00:00.000Z', 0.8), 'abc1234');
    const rows = withRun(withRun([], first), first);
    expect(rows).toHaveLength(1);
    const back = parseHistory(formatHistory(rows));
    expect(back[0]?.commit).toBe('abc1234');
    expect(back[0]?.figures['write_throughput_vs_bare']).toBe(0.8);
    expect(back[0]?.figures['proxy_overlaps']).toBe(0);
  });

  it('keeps a column it does not know when it rewrites the file', () => {
    const text = 'run_at,commit,retired_figure\n2026-01-01T00:00:00.000Z,abc,1.5\n';
    expect(formatHistory(parseHistory(text))).toContain(',retired_figure\n2026-01-01T00:00:00.000Z,abc,');
    expect(formatHistory(parseHistory(text)).trimEnd().endsWith(',1.5')).toBe(true);
  });

  it('gives the median and range of the runs kept, skipping runs that did not measure a figure', () => {
    const ratios = [0.7, 0.9, 0.8, 0.75, 0.85, 0.95];
    const rows = ratios.map((ratio, i) => historyRowOf(reportWith(`2026-01-0${i + 1}T00:00:00.000Z`, ratio), `c${i}`));
    const kept = keptRuns(rows);
    expect(kept).toHaveLength(RUNS_KEPT);
    expect(statsOf(kept, 'write_throughput_vs_bare')).toEqual({ median: 0.85, min: 0.75, max: 0.95, n: 5 });
    const withGap = [...kept.slice(0, 3), { ...kept[3]!, figures: { ...kept[3]!.figures, write_throughput_vs_bare: null } }];
    expect(statsOf(withGap, 'write_throughput_vs_bare')).toEqual({ median: 0.8, min: 0.75, max: 0.9, n: 3 });
    expect(statsOf([], 'write_throughput_vs_bare')).toBeNull();
  });

  it('names every figure once', () => {
    const ids = BENCH_FIGURES.map((figure) => figure.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('the generated blocks', () => {
  it('writes a median of large counts as a whole number, small figures to three decimals', () => {
    expect(format(106010.5, '')).toBe('106,011');
    expect(format(111153, '')).toBe('111,153');
    expect(format(0.0245, '')).toBe('0.025');
  });

  it('shows a range once more than one run was kept, and n=1 honestly before', () => {
    const rows = [0.7, 0.9].map((ratio, i) => historyRowOf(reportWith(`2026-01-0${i + 1}T00:00:00.000Z`, ratio), `c${i}`));
    const doc = `${blockStart('figures')}\n${blockEnd('figures')}\n${blockStart('headline')}\n${blockEnd('headline')}\n`;
    const inputs = (kept: typeof rows) => ({ report: latest(), kept, charts: renderCharts(latest(), kept), chartDir: 'benchmarks' });
    const two = withBlocks(doc, inputs(rows)) ?? '';
    expect(two).toContain('| uncontended locked write: throughput ÷ the bare proxy | ↑ higher | 0.80x | 0.70x – 0.90x |');
    expect(two).toContain('0.80x [0.70x–0.90x] the throughput of a bare Node proxy');
    const one = withBlocks(doc, inputs(rows.slice(1))) ?? '';
    expect(one).toContain('| uncontended locked write: throughput ÷ the bare proxy | ↑ higher | 0.90x | — |');
    expect(one).toContain('n=1');
    expect(two).toContain('| overlapping writes through one proxy | ↓ lower | 0 | 0 in every run |');
    expect(two).toContain('- **Safety**: 0 overlapping writes');
    expect(withBlocks('no markers', inputs(rows))).toBeNull();
  });

  it('writes each value right of its row\'s range and target lines', () => {
    const rows = [0.6, 0.9].map((ratio, i) => historyRowOf(reportWith(`2026-01-0${i + 1}T00:00:00.000Z`, ratio), `c${i}`));
    const [throughput] = renderCharts(latest(), rows);
    const svg = throughput?.svg ?? '';
    const label = /<text x="([\d.]+)"[^>]*>0\.75x<\/text>/.exec(svg);
    const rangeEnds = [...svg.matchAll(/<line x1="[\d.]+" y1="([\d.]+)" x2="([\d.]+)" y2="[\d.]+" class="(?:range|target)"\/>/g)];
    const labelY = /<text x="[\d.]+" y="([\d.]+)"[^>]*>0\.75x<\/text>/.exec(svg)?.[1];
    const sameRow = rangeEnds.filter((match) => Math.abs(Number(match[1]) - (Number(labelY) - 4)) <= 12);
    expect(label).not.toBeNull();
    expect(sameRow.length).toBeGreaterThan(0);
    for (const match of sameRow) expect(Number(label?.[1])).toBeGreaterThan(Number(match[2]));
  });

  it('draws the median bar and its range in the throughput chart', () => {
    const rows = [0.6, 0.9].map((ratio, i) => historyRowOf(reportWith(`2026-01-0${i + 1}T00:00:00.000Z`, ratio), `c${i}`));
    const [throughput] = renderCharts(latest(), rows);
    expect(throughput?.svg).toContain('>0.75x</text>');
    expect(throughput?.svg).toContain('class="range"');
    const [single] = renderCharts(latest(), rows.slice(0, 1));
    expect(single?.svg).not.toContain('class="range"');
  });

  it('draws one line per ratio across the runs kept, points alone while there is one run', () => {
    const rows = [0.6, 0.9].map((ratio, i) => historyRowOf(reportWith(`2026-01-0${i + 1}T00:00:00.000Z`, ratio), `c${i}`));
    const trend = (kept: typeof rows) => renderCharts(latest(), kept).find((chart) => chart.file === 'ratio-trend.svg')?.svg ?? '';
    expect(trend(rows).match(/<polyline /g)).toHaveLength(5);
    expect(trend(rows)).toContain('>c1</text>');
    expect(trend(rows.slice(0, 1))).not.toContain('<polyline ');
  });
});
