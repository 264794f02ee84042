import type { BenchReport } from './bench-report.js';
import { statsOf, type HistoryRow } from './bench-history.js';

/**
 * The charts of docs/benchmarks.md, written as plain SVG text (a handful of rectangles and labels
 * needs no plotting library). Deterministic: the same inputs give the same bytes, so a test can
 * check that the committed files are current.
 */
export interface Chart {
  readonly file: string;
  readonly title: string;
  readonly svg: string;
}

/**
 * Every ratio in these charts is a throughput ratio, better higher, as the figures table says of it;
 * a time ratio (better lower) is never drawn turned into a speed, so each ratio keeps one direction
 * wherever it is shown.
 */
interface RatioBar {
  readonly label: string;
  readonly figure: string;
  /** The goal's threshold on the same scale, when there is one. */
  readonly target?: number;
  /** A reference measured beside the proxy, drawn apart from the proxy's own bars. */
  readonly reference?: boolean;
}

const RATIO_BARS: readonly RatioBar[] = [
  { label: 'search ÷ bare proxy', figure: 'search_throughput_vs_bare', target: 0.9 },
  { label: 'search ÷ straight to the cluster', figure: 'search_throughput_vs_direct' },
  { label: 'uncontended write ÷ bare proxy', figure: 'write_throughput_vs_bare', target: 0.8 },
  { label: 'least ZooKeeper lock ÷ bare proxy', figure: 'least_lock_throughput_vs_bare', reference: true },
  { label: 'uncontended write ÷ least ZooKeeper lock', figure: 'write_throughput_vs_least_lock', target: 0.95 },
  { label: 'in-process lock write ÷ bare proxy', figure: 'in_process_throughput_vs_bare' },
  { label: 'hot documents, 1 proxy ÷ perfect lock', figure: 'hot_one_proxy_vs_perfect', target: 0.8 },
  { label: 'hot documents, 2 proxies ÷ perfect lock', figure: 'hot_two_proxies_vs_perfect', target: 0.8 },
  { label: '4 bulk streams ÷ least ZooKeeper lock', figure: 'streams_vs_least_lock', target: 0.85 },
  { label: 'fencing on ÷ off, uncontended writes', figure: 'fencing_write_throughput' },
];

const WIDTH = 790;
const LABEL_WIDTH = 320;
const PLOT_WIDTH = 380;
const ROW_HEIGHT = 26;
const TOP = 58;
const RATIO_MAX = 1.2;

export function renderCharts(report: BenchReport, kept: readonly HistoryRow[]): Chart[] {
  return [throughputChart(kept), latencyChart(report), trendChart(kept)];
}

function throughputChart(kept: readonly HistoryRow[]): Chart {
  const title = 'Throughput against the references (1 = as fast as the reference; higher is better)';
  const x = (ratio: number): number => LABEL_WIDTH + (Math.min(ratio, RATIO_MAX) / RATIO_MAX) * PLOT_WIDTH;
  const rows = RATIO_BARS.map((bar, i) => {
    const y = TOP + i * ROW_HEIGHT;
    const stats = statsOf(kept, bar.figure);
    const parts = [text(LABEL_WIDTH - 10, y + 17, bar.label, 'end')];
    if (stats === null) return [...parts, text(LABEL_WIDTH + 6, y + 17, 'not measured', 'start', 'muted')].join('');
    const { median, min: low, max: high } = stats;
    parts.push(rect(LABEL_WIDTH, y + 5, x(median) - LABEL_WIDTH, 16, bar.reference === true ? 'reference' : 'bar'));
    if (stats.n > 1) parts.push(line(x(low), y + 13, x(high), y + 13, 'range'));
    if (bar.target !== undefined) parts.push(line(x(bar.target), y + 2, x(bar.target), y + 24, 'target'));
    // The value stands right of everything drawn on its row, so no range or target line crosses it.
    const clear = Math.max(x(median), stats.n > 1 ? x(high) : 0, bar.target === undefined ? 0 : x(bar.target));
    parts.push(text(clear + 6, y + 17, `${median.toFixed(2)}x`, 'start'));
    return parts.join('');
  });
  const bottom = TOP + RATIO_BARS.length * ROW_HEIGHT;
  const axis = [0, 0.2, 0.4, 0.6, 0.8, 1, 1.2].map((tick) =>
    [line(x(tick), TOP - 4, x(tick), bottom, tick === 1 ? 'one' : 'grid'), text(x(tick), bottom + 16, tick.toFixed(1), 'middle', 'muted')].join(''),
  );
  const n = Math.max(0, ...RATIO_BARS.map((bar) => statsOf(kept, bar.figure)?.n ?? 0));
  const subtitle = n > 1 ? `median of the last ${n} runs, line: their range; red tick: the target` : 'one run kept (n=1); red tick: the target';
  return chart('throughput-ratios.svg', title, subtitle, bottom + 30, [...axis, ...rows]);
}

interface LatencyRow {
  readonly label: string;
  readonly run: string;
  readonly reference?: boolean;
}

const LATENCY_GROUPS: readonly { readonly heading: string; readonly rows: readonly LatencyRow[] }[] = [
  {
    heading: 'document writes (5 ms at the cluster)',
    rows: [
      { label: 'straight to the cluster', run: 'writeDirect', reference: true },
      { label: 'bare proxy, no lock', run: 'writeBare', reference: true },
      { label: 'bare proxy + least ZooKeeper lock', run: 'writeBareZooKeeperLock', reference: true },
      { label: 'es-lock-proxy, in-process lock', run: 'writeInProcessLock' },
      { label: 'es-lock-proxy, ZooKeeper lock', run: 'writeProxy' },
    ],
  },
  {
    heading: 'searches (1 ms at the cluster)',
    rows: [
      { label: 'straight to the cluster', run: 'searchDirect', reference: true },
      { label: 'bare proxy', run: 'searchBare', reference: true },
      { label: 'es-lock-proxy', run: 'searchProxy' },
    ],
  },
];

function latencyChart(report: BenchReport): Chart {
  const title = 'Latency at 200 requests/s, sent at an even pace (latest run)';
  const runs = report.workloads['open-loop']?.runs ?? {};
  const measured = LATENCY_GROUPS.flatMap((group) => group.rows.map((row) => runs[row.run]).filter((run) => run !== undefined));
  const maxMs = Math.max(2, ...measured.map((run) => run.p99Ms));
  const scaleMax = Math.ceil(maxMs / 2) * 2;
  const x = (ms: number): number => LABEL_WIDTH + (ms / scaleMax) * PLOT_WIDTH;
  const parts: string[] = [];
  let y = TOP;
  for (const group of LATENCY_GROUPS) {
    parts.push(text(10, y + 17, group.heading, 'start', 'heading'));
    y += ROW_HEIGHT;
    for (const row of group.rows) {
      parts.push(text(LABEL_WIDTH - 10, y + 17, row.label, 'end'));
      const run = runs[row.run];
      if (run === undefined) {
        parts.push(text(LABEL_WIDTH + 6, y + 17, 'not measured', 'start', 'muted'));
      } else {
        parts.push(rect(x(run.p50Ms), y + 7, Math.max(1, x(run.p99Ms) - x(run.p50Ms)), 12, row.reference === true ? 'reference' : 'bar'));
        parts.push(`<circle cx="${fmt(x(run.p50Ms))}" cy="${y + 13}" r="4" class="p50"/>`);
        parts.push(text(x(run.p99Ms) + 6, y + 17, `${run.p50Ms.toFixed(2)} / ${run.p99Ms.toFixed(2)} ms`, 'start'));
      }
      y += ROW_HEIGHT;
    }
  }
  const ticks = Array.from({ length: scaleMax / 2 + 1 }, (_, i) => i * 2);
  const axis = ticks.map((tick) => [line(x(tick), TOP + ROW_HEIGHT - 4, x(tick), y, 'grid'), text(x(tick), y + 16, `${tick} ms`, 'middle', 'muted')].join(''));
  return chart('latency-open-loop.svg', title, 'dot: p50, bar: p50 to p99; grey: references', y + 30, [...axis, ...parts]);
}

/** Red stays the targets' colour in every chart, so no series is drawn in it. */
const TREND_LINES: readonly { readonly label: string; readonly figure: string; readonly color: string }[] = [
  { label: 'uncontended write ÷ bare proxy', figure: 'write_throughput_vs_bare', color: '#2f81f7' },
  { label: 'uncontended write ÷ least ZooKeeper lock', figure: 'write_throughput_vs_least_lock', color: '#8250df' },
  { label: 'hot documents, 1 proxy ÷ perfect lock', figure: 'hot_one_proxy_vs_perfect', color: '#1a7f37' },
  { label: '4 bulk streams ÷ least ZooKeeper lock', figure: 'streams_vs_least_lock', color: '#bf8700' },
  { label: 'search ÷ bare proxy', figure: 'search_throughput_vs_bare', color: '#0a7ea4' },
];

/** The headline ratios run by run over the runs kept: whether a change moved them, or the machine did. */
function trendChart(kept: readonly HistoryRow[]): Chart {
  const title = 'Throughput ratios over the runs kept (higher is better)';
  const plotTop = TOP + 10;
  const plotHeight = 200;
  const y = (ratio: number): number => plotTop + plotHeight - (Math.min(ratio, RATIO_MAX) / RATIO_MAX) * plotHeight;
  const slots = Math.max(kept.length, 2);
  const x = (i: number): number => 60 + (kept.length === 1 ? 0.5 : i / (slots - 1)) * (WIDTH - 400);
  const parts: string[] = [];
  for (const tick of [0, 0.2, 0.4, 0.6, 0.8, 1, 1.2]) {
    parts.push(line(60, y(tick), WIDTH - 340, y(tick), tick === 1 ? 'one' : 'grid'), text(52, y(tick) + 4, tick.toFixed(1), 'end', 'muted'));
  }
  // Runs of one commit are told apart by their number: the label is the run, the commit beneath it.
  kept.forEach((row, i) => {
    parts.push(text(x(i), plotTop + plotHeight + 18, `run ${i + 1}`, 'middle', 'muted'));
    if (row.commit !== '') parts.push(text(x(i), plotTop + plotHeight + 32, row.commit, 'middle', 'muted'));
  });
  TREND_LINES.forEach((trend, n) => {
    const points = kept.flatMap((row, i) => {
      const value = row.figures[trend.figure];
      if (typeof value !== 'number' || value === 0) return [];
      return [`${fmt(x(i))},${fmt(y(value))}`];
    });
    if (points.length > 1) parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke="${trend.color}" stroke-width="2"/>`);
    for (const point of points) {
      const [cx, cy] = point.split(',');
      parts.push(`<circle cx="${cx}" cy="${cy}" r="4" fill="${trend.color}"/>`);
    }
    const legendY = plotTop + 10 + n * 22;
    parts.push(`<rect x="${WIDTH - 320}" y="${legendY - 9}" width="12" height="12" fill="${trend.color}"/>`, text(WIDTH - 301, legendY + 2, trend.label, 'start'));
  });
  const subtitle = kept.length === 1 ? 'one run kept so far (n=1); each later run adds a point' : `the last ${kept.length} runs, oldest first, each with its commit`;
  return chart('ratio-trend.svg', title, subtitle, plotTop + plotHeight + 50, parts);
}

const STYLE = [
  'text{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;font-size:13px;fill:#24292f}',
  '.title{font-size:16px;font-weight:600}.muted{fill:#6e7781;font-size:12px}.heading{font-weight:600}',
  '.bar{fill:#2f81f7}.reference{fill:#8c959f}.p50{fill:#0d1117}',
  '.grid{stroke:#d0d7de;stroke-width:1}.one{stroke:#57606a;stroke-width:1.5}',
  '.range{stroke:#0d1117;stroke-width:2}.target{stroke:#cf222e;stroke-width:2.5}',
].join('');

function chart(file: string, title: string, subtitle: string, height: number, body: readonly string[]): Chart {
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escape(title)}">`,
    `<style>${STYLE}</style>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    text(10, 22, title, 'start', 'title'),
    text(10, 42, subtitle, 'start', 'muted'),
    ...body,
    '</svg>',
  ].join('\n');
  return { file, title, svg: svg + '\n' };
}

function text(x: number, y: number, content: string, anchor: 'start' | 'middle' | 'end', cls?: string): string {
  const classAttr = cls === undefined ? '' : ` class="${cls}"`;
  return `<text x="${fmt(x)}" y="${fmt(y)}" text-anchor="${anchor}"${classAttr}>${escape(content)}</text>`;
}

function rect(x: number, y: number, width: number, height: number, cls: string): string {
  return `<rect x="${fmt(x)}" y="${fmt(y)}" width="${fmt(Math.max(0, width))}" height="${fmt(height)}" class="${cls}"/>`;
}

function line(x1: number, y1: number, x2: number, y2: number, cls: string): string {
  return `<line x1="${fmt(x1)}" y1="${fmt(y1)}" x2="${fmt(x2)}" y2="${fmt(y2)}" class="${cls}"/>`;
}

function fmt(value: number): string {
  return String(Math.round(value * 10) / 10);
}

function escape(content: string): string {
  return content.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
