import { javaSplitOnSlash } from './path-segments.js';

/**
 * A faithful model of Elasticsearch's `PathTrie` + `RestController.tryAllHandlers`, so that the
 * proxy picks the same route Elasticsearch picks for an odd path (`/idx/_doc/_bulk`,
 * `/idx/_refresh/1` under compatible-with=7, `//_bulk`...). Only the matching rules are modelled;
 * which routes exist is the caller's table (`es-routes.ts`).
 */

export type RouteVersion = 'current' | 'v7';

/** `PathTrie.TrieMatchingMode`, in the enum order `retrieveAll` tries them. */
const MATCHING_MODES = ['explicit', 'root-wildcard', 'leaf-wildcard', 'wildcard'] as const;
type MatchingMode = (typeof MATCHING_MODES)[number];

const WILDCARD = '*';

class MethodHandlers<H> {
  private readonly byMethod = new Map<string, Map<RouteVersion, H>>();

  add(method: string, version: RouteVersion, handler: H): void {
    const versions = this.byMethod.get(method) ?? new Map<RouteVersion, H>();
    if (versions.has(version)) throw new Error(`route registered twice for ${method} (${version})`);
    versions.set(version, handler);
    this.byMethod.set(method, versions);
  }

  /** A compatible-with=7 request falls back to the current handler, never the other way round. */
  handlerFor(method: string, version: RouteVersion): H | null {
    const versions = this.byMethod.get(method);
    if (versions === undefined) return null;
    return versions.get(version) ?? versions.get('current') ?? null;
  }

  methods(): Iterable<string> {
    return this.byMethod.keys();
  }
}

/** The name of a wildcard segment no handler reads. */
const UNNAMED = '';

class TrieNode<H> {
  readonly children = new Map<string, TrieNode<H>>();
  value: MethodHandlers<H> | null = null;

  constructor(public paramName: string | null) {}
}

export type Decode = (rawToken: string) => string;

export type Resolution<H> =
  | { readonly matched: true; readonly handler: H; readonly params: ReadonlyMap<string, string> }
  | { readonly matched: false };

export class RouteTrie<H> {
  private readonly root = new TrieNode<H>(null);

  constructor(private readonly decode: Decode) {}

  add(method: string, path: string, version: RouteVersion, handler: H): void {
    const tokens = javaSplitOnSlash(path);
    let node = this.root;
    for (const token of tokens.slice(tokens[0] === '' ? 1 : 0)) node = childFor(node, token);
    node.value ??= new MethodHandlers<H>();
    node.value.add(method, version, handler);
  }

  /**
   * What Elasticsearch dispatches `method rawPath` to, or `matched: false` when it would answer
   * 400 (no handler) or 405 (the path exists for other methods only).
   */
  resolve(method: string, rawPath: string, version: RouteVersion): Resolution<H> {
    // Split once: every matching mode (and the 405 check) walks the same tokens.
    const tokens = rawPath.length === 0 ? [] : javaSplitOnSlash(rawPath);
    let validMethods: Set<string> | null = null;
    for (const mode of MATCHING_MODES) {
      const params = new Map<string, string>();
      const handler = this.retrieve(tokens, mode, params)?.handlerFor(method, version) ?? null;
      if (handler !== null) return { matched: true, handler, params };
      // RestController stops with 405 when no match of any mode allows the method (the same set for every mode).
      validMethods ??= this.validMethods(tokens);
      if (!validMethods.has(method)) return { matched: false };
    }
    return { matched: false };
  }

  private validMethods(tokens: readonly string[]): Set<string> {
    const methods = new Set<string>();
    for (const mode of MATCHING_MODES) for (const m of this.retrieve(tokens, mode, null)?.methods() ?? []) methods.add(m);
    return methods;
  }

  private retrieve(tokens: readonly string[], mode: MatchingMode, params: Map<string, string> | null): MethodHandlers<H> | null {
    if (tokens.length === 0) return null;
    const walk = new TrieWalk<H>(tokens, mode, params, this.decode);
    return walk.retrieve(this.root, tokens[0] === '' ? 1 : 0);
  }
}

/**
 * `{name}` is a wildcard whose value the handler reads as `name`; `{}` a wildcard nobody reads (a
 * route known only by its shape), which takes whatever name another route gives the same node.
 */
function childFor<H>(node: TrieNode<H>, token: string): TrieNode<H> {
  const wildcard = /^\{(.*)\}$/.exec(token);
  const key = wildcard === null ? token : WILDCARD;
  const paramName = wildcard === null ? null : wildcard[1] ?? UNNAMED;
  const existing = node.children.get(key);
  if (existing === undefined) {
    const created = new TrieNode<H>(paramName);
    node.children.set(key, created);
    return created;
  }
  if (paramName === UNNAMED || existing.paramName === paramName) return existing;
  if (existing.paramName !== UNNAMED) throw new Error(`conflicting wildcard names ${existing.paramName} and ${paramName}`);
  existing.paramName = paramName;
  return existing;
}

/** One `TrieNode.retrieve` recursion, line for line (index 1 is the first segment after a leading `/`). */
class TrieWalk<H> {
  constructor(
    private readonly tokens: readonly string[],
    private readonly mode: MatchingMode,
    private readonly params: Map<string, string> | null,
    private readonly decode: Decode,
  ) {}

  retrieve(parent: TrieNode<H>, index: number): MethodHandlers<H> | null {
    const token = this.tokens[index];
    if (token === undefined) return null;
    const picked = this.pick(parent, token, index);
    if (picked === null) return null;
    const { node, usedWildcard } = picked;
    this.put(node, token);
    if (index === this.tokens.length - 1) return node.value;
    let value = this.retrieve(node, index + 1);
    if (value === null && !usedWildcard && this.mode !== 'explicit') {
      const wildcard = parent.children.get(WILDCARD);
      if (wildcard !== undefined) {
        this.put(wildcard, token);
        value = this.retrieve(wildcard, index + 1);
      }
    }
    return value;
  }

  private pick(parent: TrieNode<H>, token: string, index: number): { node: TrieNode<H>; usedWildcard: boolean } | null {
    const explicit = parent.children.get(token);
    const wildcard = parent.children.get(WILDCARD);
    const isLast = index === this.tokens.length - 1;
    if (explicit === undefined) {
      const allowed =
        this.mode === 'wildcard' ||
        (this.mode === 'root-wildcard' && index === 1) ||
        (this.mode === 'leaf-wildcard' && isLast);
      return allowed && wildcard !== undefined ? { node: wildcard, usedWildcard: true } : null;
    }
    if (isLast && explicit.value === null && wildcard !== undefined && this.mode !== 'explicit' && this.mode !== 'root-wildcard') {
      return { node: wildcard, usedWildcard: true };
    }
    if (index === 1 && explicit.value === null && wildcard !== undefined && this.mode === 'root-wildcard') {
      return { node: wildcard, usedWildcard: true };
    }
    return { node: explicit, usedWildcard: token === WILDCARD };
  }

  private put(node: TrieNode<H>, token: string): void {
    if (this.params !== null && node.paramName !== null && node.paramName !== UNNAMED) this.params.set(node.paramName, this.decode(token));
  }
}
