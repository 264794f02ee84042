import type { AliasApi, ClusterAnswer } from '../../../../src/write/alias-lookup.js';

/**
 * A reference model of which document Elasticsearch writes, written from its rules (not from the
 * proxy's code), and of the answers the proxy's look-ups get from it.
 *
 * - An alias's write index: the index flagged `is_write_index: true`; else its only index unless
 *   flagged false; else none, and writes through it are refused.
 *   Elasticsearch: server/src/main/java/org/elasticsearch/cluster/metadata/IndexAbstraction.java (Alias).
 * - A data stream takes writes by id only as `create`, into its last backing index (its write index).
 *   Elasticsearch: server/src/main/java/org/elasticsearch/cluster/metadata/DataStream.java (`getWriteIndex`),
 *   server/src/main/java/org/elasticsearch/action/bulk/BulkOperation.java (op_type=create in data streams).
 * - Date math, in the forms this model builds: `{now/d}` as `uuuu.MM.dd` in UTC, `{now/d{yyyy.MM.dd|±hh:mm}}`
 *   at a fixed offset, `{now/M{yyyy.MM}}`, computed here with plain UTC calendar arithmetic.
 *   Elasticsearch: server/src/main/java/org/elasticsearch/cluster/metadata/IndexNameExpressionResolver.java.
 * - Path segments are percent-decoded, so any percent-encoding of a name names the same index.
 */
export interface AliasMember {
  readonly index: string;
  readonly isWriteIndex: boolean | null;
}

export interface ClusterModel {
  readonly indices: readonly string[];
  readonly aliases: ReadonlyMap<string, readonly AliasMember[]>;
  /** Data stream name → its backing indices, oldest first (the last is its write index). */
  readonly dataStreams: ReadonlyMap<string, readonly string[]>;
}

/** The concrete index a write by id to `name` lands in, or null when Elasticsearch refuses it. */
export function concreteIndexOf(model: ClusterModel, name: string, op: 'index' | 'create'): string | null {
  const members = model.aliases.get(name);
  if (members !== undefined) return writeIndexOf(members);
  const backing = model.dataStreams.get(name);
  if (backing !== undefined) return op === 'create' ? (backing.at(-1) ?? null) : null;
  return name;
}

export function writeIndexOf(members: readonly AliasMember[]): string | null {
  const flagged = members.filter((member) => member.isWriteIndex === true);
  if (flagged.length === 1) return flagged[0]?.index ?? null;
  const [only] = members;
  return members.length === 1 && only !== undefined && only.isWriteIndex !== false ? only.index : null;
}

/** Every name a client may write a document of `index` through, in the model: the index itself and each alias writing to it. */
export function namesWritingTo(model: ClusterModel, index: string): { name: string; op: 'index' | 'create' }[] {
  const names: { name: string; op: 'index' | 'create' }[] = [{ name: index, op: 'index' }];
  for (const [alias, members] of model.aliases) if (writeIndexOf(members) === index) names.push({ name: alias, op: 'index' });
  for (const [stream, backing] of model.dataStreams) if (backing.at(-1) === index) names.push({ name: stream, op: 'create' });
  return names;
}

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/** Date-math spellings of a concrete name `<prefix><date>` at `nowMs`, each with the name it resolves to. */
export function dateMathSpellings(prefix: string, nowMs: number, offsetMinutes: number): { expression: string; concrete: string }[] {
  const utc = new Date(nowMs);
  const shifted = new Date(nowMs + offsetMinutes * 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const offset = `${sign}${pad(Math.floor(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`;
  return [
    { expression: `<${prefix}{now/d}>`, concrete: `${prefix}${utc.getUTCFullYear()}.${pad(utc.getUTCMonth() + 1)}.${pad(utc.getUTCDate())}` },
    { expression: `<${prefix}{now/M{yyyy.MM}}>`, concrete: `${prefix}${utc.getUTCFullYear()}.${pad(utc.getUTCMonth() + 1)}` },
    {
      expression: `<${prefix}{now/d{yyyy.MM.dd|${offset}}}>`,
      concrete: `${prefix}${shifted.getUTCFullYear()}.${pad(shifted.getUTCMonth() + 1)}.${pad(shifted.getUTCDate())}`,
    },
  ];
}

/** The model's answers to the proxy's look-ups, shaped as Elasticsearch 8 shapes them. */
export function modelAliasApi(model: ClusterModel): AliasApi {
  const aliasesOfIndex = (index: string): Record<string, unknown> => {
    const aliases: Record<string, unknown> = {};
    for (const [alias, members] of model.aliases) {
      const member = members.find((candidate) => candidate.index === index);
      if (member !== undefined) aliases[alias] = member.isWriteIndex === null ? {} : { is_write_index: member.isWriteIndex };
    }
    return { aliases };
  };
  const found = (body: unknown): ClusterAnswer => ({ status: 200, body });
  const missing: ClusterAnswer = { status: 404, body: { error: { type: 'index_not_found_exception' }, status: 404 } };
  return {
    async aliasesOf(name) {
      const members = model.aliases.get(name);
      if (members !== undefined) return found(Object.fromEntries(members.map((member) => [member.index, aliasesOfIndex(member.index)])));
      const backing = model.dataStreams.get(name);
      if (backing !== undefined) return found(Object.fromEntries(backing.map((index) => [index, { aliases: {} }])));
      return model.indices.includes(name) ? found({ [name]: aliasesOfIndex(name) }) : missing;
    },
    async indicesOfAlias(alias) {
      const members = model.aliases.get(alias);
      if (members === undefined) return missing;
      return found(Object.fromEntries(members.map((member) => [member.index, { aliases: { [alias]: member.isWriteIndex === null ? {} : { is_write_index: member.isWriteIndex } } }])));
    },
    async dataStream(name) {
      const backing = model.dataStreams.get(name);
      if (backing === undefined) return missing;
      return found({ data_streams: [{ name, indices: backing.map((index) => ({ index_name: index })) }] });
    },
  };
}
