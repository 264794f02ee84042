import type { Target, WorkloadResult } from './workload-result.js';

function cell(value: number | boolean | string | null): string {
  if (value === null) return 'n/a';
  if (typeof value === 'boolean') return value ? 'met' : 'NOT met';
  return String(value);
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Every workload's numbers as one Markdown table (workload, metric, value). */
export function resultsTable(results: readonly WorkloadResult[]): string {
  const rows = results.flatMap((result) => Object.entries(result.summary).map(([metric, value]) => [result.workload, metric, cell(value)]));
  return table(['workload', 'metric', 'value'], rows);
}

export function targetsTable(results: readonly WorkloadResult[]): string {
  const rows = results.flatMap((result) => result.targets.map((t: Target) => [t.goal, cell(t.value), t.met === null ? 'not measured' : cell(t.met)]));
  return table(['target', 'measured', 'result'], rows);
}

export function notesList(results: readonly WorkloadResult[]): string {
  return results.flatMap((result) => result.notes.map((note) => `- ${result.workload}: ${note}`)).join('\n');
}
