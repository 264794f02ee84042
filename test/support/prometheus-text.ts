/** A tiny reader of Prometheus' text exposition format, enough for asserting on a scrape. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const [, name = '', rawLabels = '', rawValue = ''] = match;
    samples.push({ name, labels: parseLabels(rawLabels), value: parseValue(rawValue) });
  }
  return samples;
}

function parseLabels(raw: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [, key = '', value = ''] of raw.matchAll(LABEL_PAIR)) {
    labels[key] = value.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
  }
  return labels;
}

function parseValue(raw: string): number {
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  const value = Number(raw);
  // prom-client writes NaN as `Nan` (event-loop metrics before their first sample).
  if (Number.isNaN(value) && raw.toLowerCase() !== 'nan') throw new Error(`not a sample value: ${raw}`);
  return value;
}

/** The one sample named `name` whose labels are exactly `labels`; throws when absent. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Readonly<Record<string, string>> = {}): number {
  const wanted = Object.entries(labels);
  const found = samples.filter(
    (sample) =>
      sample.name === name &&
      Object.keys(sample.labels).length === wanted.length &&
      wanted.every(([key, value]) => sample.labels[key] === value),
  );
  const [only] = found;
  if (only === undefined || found.length > 1) {
    throw new Error(`expected one sample ${name}${JSON.stringify(labels)}, found ${found.length}`);
  }
  return only.value;
}
