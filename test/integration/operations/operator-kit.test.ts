import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parsePrometheusText, type Sample } from '../../support/prometheus-text.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { BACKGROUND, FOREGROUND, ndjson, send } from '../write/write-client.js';

const read = (name: string): string => readFileSync(fileURLToPath(new URL(`../../../deploy/${name}`, import.meta.url)), 'utf8');

/** Series Prometheus makes itself for every target, not the proxy. */
const SCRAPE_SERIES = new Set(['up']);
/** Grafana's built-in variables, replaced by a value of their kind so the expression parses as PromQL. */
const GRAFANA_VARIABLES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\$__rate_interval|\$__interval|\$__range/g, '5m'],
];

interface UsedSelector {
  readonly metric: string;
  /** Label matchers with `=`: the label value must be one the proxy exports. */
  readonly equals: ReadonlyArray<readonly [string, string]>;
}

/** Every vector selector of a PromQL expression, read with Prometheus' own grammar (lezer-promql). */
function selectorsOf(expression: string): UsedSelector[] {
  const text = GRAFANA_VARIABLES.reduce((current, [pattern, value]) => current.replace(pattern, value), expression);
  const tree = parser.parse(text);
  const selectors: UsedSelector[] = [];
  const errors: string[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(`${text.slice(Math.max(0, node.from - 20), node.to + 20)} (at ${node.from})`);
      if (node.name !== 'VectorSelector') return;
      const identifier = node.node.getChild('Identifier');
      if (identifier === null) return;
      const equals: Array<readonly [string, string]> = [];
      const matchers = node.node.getChild('LabelMatchers');
      for (const matcher of matchers?.getChildren('UnquotedLabelMatcher') ?? []) {
        const name = matcher.getChild('LabelName');
        const op = matcher.getChild('MatchOp');
        const value = matcher.getChild('StringLiteral');
        if (name === null || op === null || value === null || text.slice(op.from, op.to) !== '=') continue;
        equals.push([text.slice(name.from, name.to), JSON.parse(text.slice(value.from, value.to)) as string]);
      }
      selectors.push({ metric: text.slice(identifier.from, identifier.to), equals });
    },
  });
  if (errors.length > 0) throw new Error(`not valid PromQL: ${expression}\n${errors.join('\n')}`);
  return selectors;
}

interface DashboardPanel {
  readonly title: string;
  readonly type: string;
  readonly targets?: ReadonlyArray<{ readonly expr: string }>;
}

interface Dashboard {
  readonly panels: readonly DashboardPanel[];
  readonly templating: { readonly list: ReadonlyArray<{ readonly definition?: string }> };
}

interface AlertRules {
  readonly groups: ReadonlyArray<{ readonly name: string; readonly rules: ReadonlyArray<{ alert: string; expr: string; labels: { severity: string }; annotations: { summary: string; description: string } }> }>;
}

/** `label_values(metric, label)` of a template variable. */
function labelValuesMetric(definition: string): string {
  const match = /^label_values\((\w+),\s*\w+\)$/.exec(definition);
  if (match?.[1] === undefined) throw new Error(`unexpected variable query: ${definition}`);
  return match[1];
}

/** Sample names the proxy exports, histograms' `_bucket`/`_sum`/`_count` included even before a first observation. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name = '', type = ''] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram') ['_bucket', '_sum', '_count'].forEach((suffix) => names.add(name + suffix));
    if (type === 'summary') ['_sum', '_count'].forEach((suffix) => names.add(name + suffix));
  }
  return names;
}

describe('the operator kit (deploy/) against a running proxy', () => {
  const dashboard = JSON.parse(read('grafana/es-lock-proxy-dashboard.json')) as Dashboard;
  const rules = parseYaml(read('prometheus/es-lock-proxy-alerts.yml')) as AlertRules;
  const dashboardExpressions = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
  const alertRules = rules.groups.flatMap((group) => group.rules);
  let stack: WriteStack;
  let metricsText: string;
  let samples: Sample[];

  beforeAll(async () => {
    stack = await startWriteStack({ zookeeper: inject('zookeeperConnect') });
    const [url = ''] = stack.urls;
    // Locked writes of both priorities, so the histograms have the series the kit selects.
    expect((await send(url, 'PUT', '/kit/_doc/1', { n: 1 }, FOREGROUND)).status).toBe(201);
    expect((await send(url, 'PUT', '/kit/_doc/2', { n: 2 }, BACKGROUND)).status).toBe(201);
    const bulk = await send(url, 'POST', '/_bulk', ndjson([{ index: { _index: 'kit', _id: '3' } }, { n: 3 }]), { 'content-type': 'application/x-ndjson' });
    expect(bulk.status).toBe(200);
    const response = await fetch(`${stack.adminUrls[0] ?? ''}/metrics`);
    metricsText = await response.text();
    samples = parsePrometheusText(metricsText);
  });
  afterAll(async () => {
    await stack.close();
  });

  it('both files parse, and every expression is valid PromQL', () => {
    expect(dashboardExpressions.length).toBeGreaterThan(10);
    expect(alertRules.length).toBeGreaterThan(5);
    for (const expression of [...dashboardExpressions, ...alertRules.map((rule) => rule.expr)]) expect(() => selectorsOf(expression), expression).not.toThrow();
  });

  it('every metric the dashboard and the alerts select is one the proxy exports on /metrics', () => {
    const exported = exportedNames(metricsText);
    const used = new Set([
      ...[...dashboardExpressions, ...alertRules.map((rule) => rule.expr)].flatMap((expression) => selectorsOf(expression).map((selector) => selector.metric)),
      ...dashboard.templating.list.flatMap((variable) => (variable.definition !== undefined ? [labelValuesMetric(variable.definition)] : [])),
    ]);
    const unknown = [...used].filter((name) => !exported.has(name) && !SCRAPE_SERIES.has(name));
    expect(unknown).toEqual([]);
  });

  it('every label value they match with = is one the proxy exports for that metric', () => {
    const missing = [...dashboardExpressions, ...alertRules.map((rule) => rule.expr)]
      .flatMap(selectorsOf)
      .filter((selector) => !SCRAPE_SERIES.has(selector.metric))
      .flatMap((selector) =>
        selector.equals
          .filter(([label, value]) => !samples.some((sample) => sample.name === selector.metric && sample.labels[label] === value))
          .map(([label, value]) => `${selector.metric}{${label}="${value}"}`),
      );
    expect(missing).toEqual([]);
  });

  it('the dashboard shows every metric family of the proxy', () => {
    const families = [...metricsText.matchAll(/^# TYPE (es_lock_proxy_\S+) /gm)].map(([, name = '']) => name);
    expect(families.length).toBeGreaterThan(10);
    const shown = new Set(dashboardExpressions.flatMap(selectorsOf).map((selector) => selector.metric.replace(/_(bucket|sum|count)$/, '')));
    expect(families.filter((family) => !shown.has(family))).toEqual([]);
  });

  it('alerts cover the lock service, lock waits, dead letters and upstream errors, each with a severity and a description', () => {
    expect(alertRules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining(['EsLockProxyZooKeeperUnavailable', 'EsLockProxyForegroundLockWaitNearTimeout', 'EsLockProxyDeadLettersGrowing', 'EsLockProxyUpstream5xx']),
    );
    for (const rule of alertRules) {
      expect(['critical', 'warning', 'info'], rule.alert).toContain(rule.labels.severity);
      expect(rule.annotations.summary, rule.alert).not.toBe('');
      expect(rule.annotations.description, rule.alert).not.toBe('');
    }
  });
});
