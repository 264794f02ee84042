import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { COMPATIBLE_7_ROUTES, WRITE_ROUTES, type Method } from '../src/classify/es-write-routes.js';
import { shadowingRoutes, unmodelledWriteRoutes, type ShadowingRoute, type SpecRoute } from '../src/classify/route-shapes.js';

/*
 * Regenerates, from Elasticsearch's REST API specification (`specification/_json_spec/` of
 * elastic/elasticsearch-specification, one branch per minor version), the routes the classifier
 * must know so that a non-write request is not taken for a document write, and the full route
 * list the classifier's test walks. The same files are in elastic/elasticsearch under
 * `rest-api-spec/src/main/resources/rest-api-spec/api/` at each release tag. Usage:
 *
 *   npm run spec:routes -- <dir of the JSON files> --version 8.19 [--source elastic/elasticsearch-specification@<commit>]
 */

const SHADOWING_OUTPUT = 'src/classify/es-spec-shadowing-routes.generated.ts';
const ALL_ROUTES_OUTPUT = 'test/support/es-spec-routes.generated.ts';
const METHODS: ReadonlySet<string> = new Set<Method>(['GET', 'HEAD', 'PUT', 'POST', 'DELETE']);

interface SpecFile {
  readonly [api: string]: { readonly url: { readonly paths: ReadonlyArray<{ readonly path: string; readonly methods: readonly string[] }> } };
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { version: { type: 'string' }, source: { type: 'string', default: 'elastic/elasticsearch-specification' } },
  });
  const [dir] = positionals;
  if (dir === undefined || values.version === undefined) {
    throw new Error('usage: npm run spec:routes -- <specification/_json_spec dir> --version <major.minor> [--source <repository@commit>]');
  }
  const spec = readSpec(dir);
  const writeRows = [...WRITE_ROUTES, ...COMPATIBLE_7_ROUTES];
  const unmodelled = unmodelledWriteRoutes(spec, writeRows);
  if (unmodelled.length > 0) {
    throw new Error(`the specification has write routes src/classify/es-write-routes.ts does not serve:\n  ${unmodelled.join('\n  ')}`);
  }
  const header = { version: values.version, source: values.source };
  const shadowing = shadowingRoutes(spec, writeRows);
  writeFileSync(SHADOWING_OUTPUT, renderShadowing(header, shadowing));
  writeFileSync(ALL_ROUTES_OUTPUT, renderAllRoutes(header, spec));
  const pairs = spec.reduce((sum, route) => sum + route.methods.length, 0);
  console.error(`${values.version}: ${new Set(spec.map((r) => r.api)).size} APIs, ${pairs} path and method pairs, ${shadowing.length} shadowing paths`);
}

function readSpec(dir: string): SpecRoute[] {
  const routes: SpecRoute[] = [];
  // `_common.json` (in elastic/elasticsearch's copy of the files) holds the parameters every API takes, no route.
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json') && name !== '_common.json').sort()) {
    const parsed = JSON.parse(readFileSync(join(dir, file), 'utf8')) as SpecFile;
    for (const [api, definition] of Object.entries(parsed)) {
      for (const { path, methods } of definition.url.paths) routes.push({ api, path: checkedPath(file, path), methods: methods.map((m) => checkedMethod(file, m)) });
    }
  }
  if (routes.length === 0) throw new Error(`no API definitions in ${dir}`);
  return routes;
}

function checkedMethod(file: string, method: string): Method {
  if (!METHODS.has(method)) throw new Error(`${file}: unexpected method ${method}`);
  return method as Method;
}

/** The generated files quote paths with single quotes and no escapes. */
function checkedPath(file: string, path: string): string {
  if (!/^\/[\w{}./,-]*$/.test(path)) throw new Error(`${file}: unexpected path ${path}`);
  return path;
}

interface Header {
  readonly version: string;
  readonly source: string;
}

function renderShadowing(header: Header, routes: readonly ShadowingRoute[]): string {
  const rows = routes.map((r) => `  [[${r.methods.map(quote).join(', ')}], ${quote(r.path)}, ${quote(r.apis.join(' '))}],`);
  return [
    generatedBanner(header),
    `import type { Method } from './es-write-routes.js';`,
    '',
    `export const SPEC_VERSION = ${quote(header.version)};`,
    '',
    '/**',
    ' * Every non-write route of the specification that a request could match as well as a write route',
    " * (current or compatible-with=7): Elasticsearch's trie prefers their literal segments, so the",
    ' * classifier registers them to route such requests where Elasticsearch does.',
    ' */',
    'export const SPEC_SHADOWING_ROUTES: ReadonlyArray<readonly [methods: readonly Method[], path: string, apis: string]> = [',
    ...rows,
    '];',
    '',
  ].join('\n');
}

function renderAllRoutes(header: Header, routes: readonly SpecRoute[]): string {
  const rows = routes.map((r) => `  [${quote(r.api)}, ${quote(r.path)}, [${r.methods.map(quote).join(', ')}]],`);
  return [
    generatedBanner(header),
    `import type { Method } from '../../src/classify/es-write-routes.js';`,
    '',
    `export const SPEC_VERSION = ${quote(header.version)};`,
    '',
    '/** Every path of every API of the specification, with its methods. */',
    'export const SPEC_ROUTES: ReadonlyArray<readonly [api: string, path: string, methods: readonly Method[]]> = [',
    ...rows,
    '];',
    '',
  ].join('\n');
}

function generatedBanner({ version, source }: Header): string {
  return [
    `// Generated by scripts/es-spec-routes.ts from Elasticsearch's REST API specification ${version}`,
    `// (${source}, specification/_json_spec). Do not edit: regenerate with \`npm run spec:routes\`.`,
  ].join('\n');
}

function quote(text: string): string {
  return `'${text}'`;
}

main();
