import { ProxyError } from '../../errors/proxy-error.js';
import { globMatch } from './glob-match.js';

/**
 * One node of a compiled `filter_path`, as Elasticsearch's `FilterPath` builds it: the filters
 * form a trie of dotted segments; a segment containing `*` is matched as a glob, `**` also
 * matches any number of levels; a final node matches everything below it.
 */
export interface FilterPathNode {
  readonly pattern: string;
  readonly final: boolean;
  readonly terms: ReadonlyMap<string, FilterPathNode>;
  readonly wildcards: readonly FilterPathNode[];
  readonly doubleWildcard: boolean;
}

/** Elasticsearch refuses deeper filters ("Filter exceeds maximum depth"): they can only be mistakes. */
export const MAX_FILTER_DEPTH = 500;

interface BuildNode {
  readonly final: boolean;
  readonly children: Map<string, BuildNode>;
}

/**
 * Compiles filters into one root node; null for no filters at all. Each filter is trimmed and
 * skipped when empty (a filter made only of blanks still yields a root that matches nothing, as
 * in Elasticsearch); it is split at its first `.` that is not escaped as `\.` and is not its first
 * character; a shorter filter that ends where a longer one continues wins (`a` covers `a.b`).
 */
export function compileFilterPaths(filters: readonly string[]): FilterPathNode | null {
  if (filters.length === 0) return null;
  const root: BuildNode = { final: false, children: new Map() };
  for (const filter of filters) {
    const trimmed = filter.trim();
    if (trimmed !== '') insert(root, trimmed, 0);
  }
  return build('', root);
}

function insert(node: BuildNode, filter: string, depth: number): void {
  if (depth > MAX_FILTER_DEPTH) {
    throw new ProxyError('BAD_REQUEST', `Filter exceeds maximum depth at [${filter.slice(0, 100)}]`);
  }
  const split = firstSeparator(filter);
  if (split <= 0) {
    // A leading `.` ends the scan before any escape is seen: Elasticsearch keeps such a filter as written.
    node.children.set(split === 0 ? filter : unescapeDots(filter), { final: true, children: new Map() });
    return;
  }
  const field = unescapeDots(filter.slice(0, split));
  let child = node.children.get(field);
  if (child === undefined) {
    child = { final: false, children: new Map() };
    node.children.set(field, child);
  }
  if (!child.final) insert(child, filter.slice(split + 1), depth + 1);
}

/** Index of the first `.` not written as `\.`, or -1. */
function firstSeparator(filter: string): number {
  for (let i = 0; i < filter.length; i++) {
    if (filter[i] === '.') return i;
    if (filter[i] === '\\' && filter[i + 1] === '.') i++;
  }
  return -1;
}

function unescapeDots(segment: string): string {
  return segment.replaceAll('\\.', '.');
}

function build(pattern: string, node: BuildNode): FilterPathNode {
  const terms = new Map<string, FilterPathNode>();
  const wildcards: FilterPathNode[] = [];
  for (const [name, child] of node.children) {
    const built = build(name, child);
    if (name.includes('*')) wildcards.push(built);
    else terms.set(name, built);
  }
  return { pattern, final: node.final, terms, wildcards, doubleWildcard: pattern === '**' };
}

/**
 * Whether property `name` is matched in full by a filter continuing at `node` (true), else
 * which nodes continue below it, appended to `next` (Elasticsearch's `FilterPath.matches`).
 */
export function matchName(node: FilterPathNode, name: string, next: FilterPathNode[]): boolean {
  const term = node.terms.get(name);
  if (term !== undefined) {
    if (term.final) return true;
    next.push(term);
  }
  for (const wildcard of node.wildcards) {
    if (!globMatch(wildcard.pattern, name)) continue;
    if (wildcard.final) return true;
    next.push(wildcard);
  }
  if (node.doubleWildcard) next.push(node);
  return false;
}
