import type { Json } from './filter-json.js';

const INDENT = '  ';

/**
 * `?pretty` as Elasticsearch writes it: Jackson's DefaultPrettyPrinter with two-space indents
 * and `\n` line ends (JsonXContentGenerator.usePrettyPrint), `" : "` between a name and its
 * value, `{ }` and `[ ]` for empty containers, and a line feed after the document (`lfAtEnd`).
 */
export function prettyJson(value: Json): string {
  return `${render(value, 0)}\n`;
}

function render(value: Json, depth: number): string {
  if (Array.isArray(value)) return renderArray(value as readonly Json[], depth);
  if (typeof value === 'object' && value !== null) return renderObject(value as { readonly [key: string]: Json }, depth);
  return JSON.stringify(value);
}

function renderObject(object: { readonly [key: string]: Json }, depth: number): string {
  const entries = Object.entries(object);
  if (entries.length === 0) return '{ }';
  const inner = newline(depth + 1);
  const members = entries.map(([name, member]) => `${inner}${JSON.stringify(name)} : ${render(member, depth + 1)}`);
  return `{${members.join(',')}${newline(depth)}}`;
}

function renderArray(items: readonly Json[], depth: number): string {
  if (items.length === 0) return '[ ]';
  const inner = newline(depth + 1);
  return `[${items.map((item) => `${inner}${render(item, depth + 1)}`).join(',')}${newline(depth)}]`;
}

function newline(depth: number): string {
  return `\n${INDENT.repeat(depth)}`;
}
