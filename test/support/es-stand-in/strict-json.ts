/** Where a JSON text names one field twice in one object. */
export interface DuplicateField {
  readonly name: string;
  /** 1-based, as Jackson reports it. */
  readonly line: number;
  readonly column: number;
}

type Container = { readonly kind: 'object'; readonly names: Set<string>; expectName: boolean } | { readonly kind: 'array' };

/**
 * The first field named twice in one object of `text`, a text JSON.parse accepts, or null.
 * Elasticsearch parses JSON with Jackson's STRICT_DUPLICATE_DETECTION on and refuses such a body
 * (Elasticsearch: libs/x-content/impl/src/main/java/org/elasticsearch/xcontent/provider/json/JsonXContentImpl.java),
 * where JSON.parse keeps the last value: the stand-in checks separately so that a request
 * Elasticsearch refuses is refused here too.
 */
export function duplicateFieldOf(text: string): DuplicateField | null {
  const stack: Container[] = [];
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    const top = stack.at(-1);
    if (char === '{') stack.push({ kind: 'object', names: new Set(), expectName: true });
    else if (char === '[') stack.push({ kind: 'array' });
    else if (char === '}' || char === ']') stack.pop();
    else if (char === ',' && top?.kind === 'object') top.expectName = true;
    else if (char === '"') {
      const end = closingQuote(text, at);
      if (top?.kind === 'object' && top.expectName) {
        const name = JSON.parse(text.slice(at, end + 1)) as string;
        if (top.names.has(name)) return { name, ...positionOf(text, end + 1) };
        top.names.add(name);
        top.expectName = false;
      }
      at = end;
    }
  }
  return null;
}

/** Jackson's message as Elasticsearch's XContentParseException gives it: `[line:column] Duplicate field 'name'`. */
export function duplicateReason(duplicate: DuplicateField): string {
  return `[${duplicate.line}:${duplicate.column}] Duplicate field '${duplicate.name}'`;
}

function closingQuote(text: string, open: number): number {
  for (let at = open + 1; at < text.length; at++) {
    if (text[at] === '\\') at++;
    else if (text[at] === '"') return at;
  }
  return text.length - 1;
}

function positionOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}
