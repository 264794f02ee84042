import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { COMPATIBLE_7_ROUTES, WRITE_ROUTES } from '../src/classify/es-write-routes.js';
import { shadowingRoutes, unmodelledWriteRoutes, type ShadowingRoute, type SpecRoute, type VersionedSpec } from '../src/classify/route-shapes.js';
import { readSpecification } from './es-spec-reader.js';

/*
 * Regenerates, from Elasticsearch's REST API specification (the `specification/` folder of
 * elastic/elasticsearch-specification, one branch per minor version), the routes the classifier
 * must know so that a non-write request is not taken for a document write, and the full route
 * lists the classifier's test walks. Give every release the proxy supports: a route shadows a
 * write route only where each of them has it. Usage:
 *
 *   npm run spec:routes -- 8.19=<8.19 checkout>/specification 9.5=<9.5 checkout>/specification \
 *     [--source 8.19=elastic/elasticsearch-specification@<commit>] [--source 9.5=…]
 */

const SHADOWING_OUTPUT = 'src/classify/es-spec-shadowing-routes.generated.ts';
const ALL_ROUTES_OUTPUT = 'test/support/es-spec-routes.generated.ts';

interface GeneratedSpec extends VersionedSpec {
  readonly routes: SpecRoute[];
  readonly source: string;
  readonly format: string;
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { source: { type: 'string', multiple: true, default: [] } } });
  if (positionals.length === 0) {
    throw new Error('usage: npm run spec:routes -- <major.minor>=<specification dir> … [--source <major.minor>=<repository@commit>]');
  }
  const sources = new Map(values.source.map((pair) => splitPair(pair)));
  const specs = positionals.map((pair) => {
    const [version, dir] = splitPair(pair);
    const { routes, format } = readSpecification(dir);
    return { version, routes, format, source: sources.get(version) ?? 'elastic/elasticsearch-specification' };
  });
  const writeRows = [...WRITE_ROUTES, ...COMPATIBLE_7_ROUTES];
  for (const spec of specs) {
    const unmodelled = unmodelledWriteRoutes(spec.routes, writeRows);
    if (unmodelled.length > 0) {
      throw new Error(`${spec.version} has write routes src/classify/es-write-routes.ts does not serve:\n  ${unmodelled.join('\n  ')}`);
    }
  }
  const shadowing = shadowingRoutes(specs, writeRows);
  writeFileSync(SHADOWING_OUTPUT, renderShadowing(specs, shadowing));
  writeFileSync(ALL_ROUTES_OUTPUT, renderAllRoutes(specs));
  for (const spec of specs) {
    const pairs = spec.routes.reduce((sum, route) => sum + route.methods.length, 0);
    console.error(`${spec.version} (${spec.format}): ${new Set(spec.routes.map((r) => r.api)).size} APIs, ${pairs} path and method pairs`);
  }
  console.error(`${shadowing.length} shadowing rows (${shadowing.filter((r) => r.version === 'v7').length} for compatible-with=7 only)`);
}

function splitPair(pair: string): [string, string] {
  const at = pair.indexOf('=');
  if (at <= 0 || !/^\d+\.\d+$/.test(pair.slice(0, at))) throw new Error(`expected <major.minor>=<value>, got ${pair}`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}

function renderShadowing(specs: readonly GeneratedSpec[], routes: readonly ShadowingRoute[]): string {
  const rows = routes.map((r) => `  [[${r.methods.map(quote).join(', ')}], ${quote(r.path)}, ${quote(r.version)}, ${quote(r.apis.join(' '))}],`);
  return [
    generatedBanner(specs),
    `import type { RouteVersion } from './es-route-trie.js';`,
    `import type { Method } from './es-write-routes.js';`,
    '',
    `export const SPEC_VERSIONS: readonly string[] = [${specs.map((s) => quote(s.version)).join(', ')}];`,
    '',
    '/**',
    ' * Every non-write route of the specifications that a request could match as well as a write route',
    " * (current or compatible-with=7): Elasticsearch's trie prefers their literal segments, so the",
    ' * classifier registers them to route such requests where Elasticsearch does. `current`: in every',
    ' * release listed; `v7`: in every 8.x release listed, for compatible-with=7 requests only.',
    ' */',
    'export const SPEC_SHADOWING_ROUTES: ReadonlyArray<readonly [methods: readonly Method[], path: string, version: RouteVersion, apis: string]> = [',
    ...rows,
    '];',
    '',
  ].join('\n');
}

function renderAllRoutes(specs: readonly GeneratedSpec[]): string {
  const blocks = specs.flatMap((spec) => [
    `  {`,
    `    version: ${quote(spec.version)},`,
    `    routes: [`,
    ...spec.routes.map((r) => `      [${quote(r.api)}, ${quote(r.path)}, [${r.methods.map(quote).join(', ')}]],`),
    `    ],`,
    `  },`,
  ]);
  return [
    generatedBanner(specs),
    `import type { Method } from '../../src/classify/es-write-routes.js';`,
    '',
    '/** Every path of every API of each specification, with its methods. */',
    'export const SPECIFICATIONS: ReadonlyArray<{ readonly version: string; readonly routes: ReadonlyArray<readonly [api: string, path: string, methods: readonly Method[]]> }> = [',
    ...blocks,
    '];',
    '',
  ].join('\n');
}

function generatedBanner(specs: readonly GeneratedSpec[]): string {
  return [
    "// Generated by scripts/es-spec-routes.ts from Elasticsearch's REST API specifications:",
    ...specs.map((s) => `//   ${s.version}: ${s.source} (specification/, read from its ${s.format === 'typescript' ? 'TypeScript definitions' : '_json_spec folder'})`),
    '// Do not edit: regenerate with `npm run spec:routes`.',
  ].join('\n');
}

function quote(text: string): string {
  return `'${text}'`;
}

main();
