import type { Client } from '@elastic/elasticsearch';
import type { AliasLookup, NameAliases } from './alias-resolver.js';

// How the proxy reads a name's aliases from the cluster: the answers of `GET /{name}/_alias`,
// `GET /_alias/{alias}` and `GET /_data_stream/{name}`, read by Elasticsearch's rules.

interface AliasEntry {
  readonly aliases?: Readonly<Record<string, { readonly is_write_index?: boolean; readonly index_routing?: string }>>;
}

/** An answer of the cluster: its status and JSON body. */
export interface ClusterAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** The three reads alias resolution makes. */
export interface AliasApi {
  /** `GET /{name}/_alias` (400 and 404 are answers, not failures). */
  aliasesOf(name: string): Promise<ClusterAnswer>;
  /** `GET /_alias/{alias}`: every index of an alias (404 is an answer). */
  indicesOfAlias(alias: string): Promise<ClusterAnswer>;
  /** `GET /_data_stream/{name}` (400 and 404 are answers: no such data stream). */
  dataStream(name: string): Promise<ClusterAnswer>;
}

/** `AliasApi` over the official client. */
export function clusterAliasApi(client: Client): AliasApi {
  const answer = (response: { statusCode?: number | null; body: unknown }): ClusterAnswer => ({ status: response.statusCode ?? 200, body: response.body });
  return {
    aliasesOf: async (name) => answer(await client.indices.getAlias({ index: name }, { ignore: [400, 404], meta: true })),
    indicesOfAlias: async (alias) => answer(await client.indices.getAlias({ name: alias }, { ignore: [404], meta: true })),
    dataStream: async (name) => answer(await client.indices.getDataStream({ name }, { ignore: [400, 404], meta: true })),
  };
}

/** `AliasLookup` over the official client. */
export function clusterAliasLookup(client: Client): AliasLookup {
  return aliasLookupOf(clusterAliasApi(client));
}

/**
 * `AliasLookup` over the cluster's answers: `GET /{name}/_alias`, 404 meaning the name does not
 * exist yet (the write will create an index of that name). A 400 means Elasticsearch does not take
 * the name as an index at all (`_all`, a name it cannot route): no alias can lead there and the
 * write to it is refused by Elasticsearch itself, so the name stands as its own key and the client
 * gets Elasticsearch's answer, not a 503 for its own mistake.
 *
 * An alias listed on a concrete index without `is_write_index` (`{}`) makes that index its write
 * index only when the alias has no other index; those aliases are looked up too (`GET /_alias/{alias}`).
 * A concrete index named as a backing index is checked against its data stream.
 */
export function aliasLookupOf(api: AliasApi): AliasLookup {
  return async (name) => {
    const response = await api.aliasesOf(name);
    if (response.status === 404 || response.status === 400) return null;
    const body = response.body as Readonly<Record<string, AliasEntry>>;
    const counts = new Map<string, number>();
    for (const alias of unflaggedAliasesOf(name, body)) {
      const members = await api.indicesOfAlias(alias);
      counts.set(alias, members.status === 404 ? 0 : Object.keys(members.body as object).length);
    }
    const aliases = aliasesOfAnswer(name, body, (alias) => counts.get(alias) ?? 0);
    const dataStream = aliases.isAlias ? null : await dataStreamOfBackingIndex(api, name);
    return dataStream === null ? aliases : { ...aliases, dataStream };
  };
}

/** The data stream whose backing indices include `index` (`GET /_data_stream/{candidate}`), or null. */
async function dataStreamOfBackingIndex(api: AliasApi, index: string): Promise<string | null> {
  const candidate = dataStreamCandidateOf(index);
  if (candidate === null) return null;
  const response = await api.dataStream(candidate);
  if (response.status !== 200) return null;
  const streams = (response.body as { data_streams?: readonly { name: string; indices?: readonly { index_name: string }[] }[] }).data_streams ?? [];
  return streams.find((stream) => stream.name === candidate && (stream.indices ?? []).some((backing) => backing.index_name === index))?.name ?? null;
}

/** Aliases listed on the concrete index `name` without an `is_write_index` flag. */
export function unflaggedAliasesOf(name: string, body: Readonly<Record<string, AliasEntry>>): string[] {
  const aliases = body[name]?.aliases ?? {};
  return Object.keys(aliases).filter((alias) => typeof aliases[alias]?.is_write_index !== 'boolean');
}

/**
 * `indexCount` tells how many indices an unflagged alias has. Elasticsearch's rule for an alias's
 * write index: the index flagged `is_write_index: true`; else, when the alias has exactly one index
 * and that index's flag is not `false`, that index; else none.
 * Elasticsearch: server/src/main/java/org/elasticsearch/cluster/metadata/IndexAbstraction.java
 * (the Alias constructor, which picks `writeIndex`).
 */
export function aliasesOfAnswer(name: string, body: Readonly<Record<string, AliasEntry>>, indexCount: (alias: string) => number): NameAliases {
  const indices = Object.keys(body);
  if (!indices.includes(name)) {
    const writeIndex = writeIndexOfAlias(name, body);
    const writeIndexRouting = writeIndex === null ? null : (body[writeIndex]?.aliases?.[name]?.index_routing ?? null);
    return { isAlias: true, writeAliases: [], writeIndex, writeIndexRouting };
  }
  const aliases = body[name]?.aliases ?? {};
  const writesHere = (alias: string): boolean => {
    const flag = aliases[alias]?.is_write_index;
    return flag === true || (typeof flag !== 'boolean' && indexCount(alias) === 1);
  };
  const formerWriteAliases = Object.keys(aliases).filter((alias) => aliases[alias]?.is_write_index === false);
  return { isAlias: false, writeAliases: Object.keys(aliases).filter(writesHere), formerWriteAliases, writeIndex: name };
}

/**
 * The data stream a backing index name points at, by the name Elasticsearch gives backing indices:
 * `.ds-<data stream>-<yyyy.MM.dd>-<generation>` (`.ds-<data stream>-<generation>` before 7.11).
 * Elasticsearch: server/src/main/java/org/elasticsearch/cluster/metadata/DataStream.java
 * (`getDefaultBackingIndexName`). A candidate only: the look-up confirms it.
 */
export function dataStreamCandidateOf(index: string): string | null {
  const match = /^\.ds-(.+?)-(?:\d{4}\.\d{2}\.\d{2}-)?\d{6}$/.exec(index);
  return match?.[1] ?? null;
}

/** As Elasticsearch picks it: the index flagged `is_write_index: true`, else the alias's only index unless flagged false. */
function writeIndexOfAlias(alias: string, body: Readonly<Record<string, AliasEntry>>): string | null {
  const indices = Object.keys(body);
  const flagged = indices.find((index) => body[index]?.aliases?.[alias]?.is_write_index === true);
  if (flagged !== undefined) return flagged;
  const [only] = indices;
  return indices.length === 1 && only !== undefined && body[only]?.aliases?.[alias]?.is_write_index !== false ? only : null;
}
