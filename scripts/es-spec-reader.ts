import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { Method } from '../src/classify/es-write-routes.js';
import type { SpecRoute } from '../src/classify/route-shapes.js';

/*
 * Reads the routes of Elasticsearch's TypeScript specification (`specification/` of
 * elastic/elasticsearch-specification): every `interface Request` that declares
 * `urls: [{ path: '…', methods: [...] }]`, named by its `@rest_spec_name` tag. Only APIs marked
 * `@availability stack` count: the others exist on Elastic's serverless offering alone, and a route
 * the proxy believes in but the cluster lacks could hide a write.
 */

const METHODS: ReadonlySet<string> = new Set<Method>(['GET', 'HEAD', 'PUT', 'POST', 'DELETE']);

/**
 * The routes of one branch's `specification/` folder. Its TypeScript definitions are read when every
 * request has its urls (9.x and later, where `_json_spec/` is gone); 8.x branches still lack the
 * urls of a few requests there, and their `_json_spec/` folder is read instead.
 */
export function readSpecification(dir: string): { readonly routes: SpecRoute[]; readonly format: 'typescript' | '_json_spec' } {
  const typeScript = readTypeScriptSpec(dir);
  if (typeScript.requestsWithoutUrls.length === 0) return { routes: typeScript.routes, format: 'typescript' };
  if (existsSync(join(dir, '_json_spec'))) return { routes: readJsonSpec(join(dir, '_json_spec')), format: '_json_spec' };
  throw new Error(`${dir}: requests without urls and no _json_spec folder: ${typeScript.requestsWithoutUrls.join(', ')}`);
}

export function readTypeScriptSpec(dir: string): { readonly routes: SpecRoute[]; readonly requestsWithoutUrls: string[] } {
  const routes: SpecRoute[] = [];
  const requestsWithoutUrls: string[] = [];
  for (const file of typeScriptFiles(dir)) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes('@rest_spec_name')) continue;
    const declared = routesOfSource(file, text);
    routes.push(...declared.routes);
    requestsWithoutUrls.push(...declared.requestsWithoutUrls);
  }
  if (routes.length === 0) throw new Error(`no request definitions with urls in ${dir}`);
  return { routes: sortedRoutes(routes), requestsWithoutUrls };
}

interface SpecFile {
  readonly [api: string]: { readonly url: { readonly paths: ReadonlyArray<{ readonly path: string; readonly methods: readonly string[] }> } };
}

/** The JSON files of `specification/_json_spec/` (up to 9.1), also at `rest-api-spec/src/main/resources/rest-api-spec/api/` in elastic/elasticsearch. */
export function readJsonSpec(dir: string): SpecRoute[] {
  const routes: SpecRoute[] = [];
  // `_common.json` (in elastic/elasticsearch's copy of the files) holds the parameters every API takes, no route.
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json') && name !== '_common.json').sort()) {
    const parsed = JSON.parse(readFileSync(join(dir, file), 'utf8')) as SpecFile;
    for (const [api, definition] of Object.entries(parsed)) {
      for (const { path, methods } of definition.url.paths) routes.push({ api, path: checkedPath(file, path), methods: methods.map((m) => checkedMethodName(file, m)) });
    }
  }
  if (routes.length === 0) throw new Error(`no API definitions in ${dir}`);
  return sortedRoutes(routes);
}

/** The routes one source file declares, and the APIs it names without urls. */
export function routesOfSource(file: string, text: string): { readonly routes: SpecRoute[]; readonly requestsWithoutUrls: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const routes: SpecRoute[] = [];
  const requestsWithoutUrls: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isInterfaceDeclaration(statement) || statement.name.text !== 'Request') continue;
    const api = tagValue(statement, 'rest_spec_name');
    if (api === null) continue;
    if (!availabilities(statement).includes('stack')) continue;
    const urls = statement.members.find((member) => ts.isPropertySignature(member) && member.name.getText(source) === 'urls');
    if (urls === undefined) {
      requestsWithoutUrls.push(api);
      continue;
    }
    for (const { path, methods } of urlsOf(file, source, urls as ts.PropertySignature)) routes.push({ api, path, methods });
  }
  return { routes, requestsWithoutUrls };
}

function urlsOf(file: string, source: ts.SourceFile, urls: ts.PropertySignature): Array<{ path: string; methods: Method[] }> {
  const type = urls.type;
  if (type === undefined || !ts.isTupleTypeNode(type)) throw new Error(`${file}: urls is not a tuple`);
  return type.elements.map((element) => {
    if (!ts.isTypeLiteralNode(element)) throw new Error(`${file}: an entry of urls is not an object type`);
    const path = memberType(element, 'path', source);
    const methods = memberType(element, 'methods', source);
    if (path === undefined || !ts.isLiteralTypeNode(path) || !ts.isStringLiteral(path.literal)) throw new Error(`${file}: a url without a string path`);
    if (methods === undefined || !ts.isTupleTypeNode(methods)) throw new Error(`${file}: ${path.literal.text} has no methods tuple`);
    return { path: checkedPath(file, path.literal.text), methods: methods.elements.map((m) => checkedMethod(file, m, source)) };
  });
}

function memberType(literal: ts.TypeLiteralNode, name: string, source: ts.SourceFile): ts.TypeNode | undefined {
  const member = literal.members.find((m) => ts.isPropertySignature(m) && m.name.getText(source) === name);
  return member !== undefined && ts.isPropertySignature(member) ? member.type : undefined;
}

function checkedMethod(file: string, node: ts.TypeNode, source: ts.SourceFile): Method {
  return checkedMethodName(file, ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal) ? node.literal.text : node.getText(source));
}

function checkedMethodName(file: string, method: string): Method {
  if (!METHODS.has(method)) throw new Error(`${file}: unexpected method ${method}`);
  return method as Method;
}

/** The generated files quote paths with single quotes and no escapes. */
function checkedPath(file: string, path: string): string {
  if (!/^\/[\w{}./,-]*$/.test(path)) throw new Error(`${file}: unexpected path ${path}`);
  return path;
}

function tagValue(node: ts.Node, name: string): string | null {
  const tag = ts.getJSDocTags(node).find((t) => t.tagName.text === name);
  const comment = tag === undefined ? undefined : ts.getTextOfJSDocComment(tag.comment);
  return comment === undefined ? null : comment.trim();
}

/** `@availability stack since=8.11.0 stability=stable` → `stack`, one entry per tag. */
function availabilities(node: ts.Node): string[] {
  return ts
    .getJSDocTags(node)
    .filter((t) => t.tagName.text === 'availability')
    .map((t) => (ts.getTextOfJSDocComment(t.comment) ?? '').trim().split(/\s+/)[0] ?? '');
}

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function sortedRoutes(routes: SpecRoute[]): SpecRoute[] {
  return routes.sort((a, b) => compare(a.api, b.api) || compare(a.path, b.path));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
