/**
 * Properties syntax cases with the entries java.util.Properties yields for them (last value of
 * a repeated key wins). The unit test checks our parser against `expected`; the differential
 * test checks `expected` itself against a real JVM, so these expectations are Java's, not ours.
 */
export interface PropertiesCase {
  readonly name: string;
  readonly text: string;
  readonly expected: Readonly<Record<string, string>>;
}

export const PROPERTIES_CASES: readonly PropertiesCase[] = [
  { name: '= separator', text: 'a=b\n', expected: { a: 'b' } },
  { name: ': separator', text: 'a: b\n', expected: { a: 'b' } },
  { name: 'whitespace separator', text: 'a b\n', expected: { a: 'b' } },
  { name: 'tab and form-feed separators', text: 'a\tb\nc\fd\n', expected: { a: 'b', c: 'd' } },
  { name: 'spaces around the separator', text: '  key  =   value\n', expected: { key: 'value' } },
  { name: 'trailing whitespace of a value is kept', text: 'a=b  \n', expected: { a: 'b  ' } },
  { name: 'empty value', text: 'a=\nb\n', expected: { a: '', b: '' } },
  { name: 'only one separator is consumed', text: 'a==b\nc:=d\ne = = f\ng : : h\n', expected: { a: '=b', c: '=d', e: '= f', g: ': h' } },
  { name: 'whitespace then separator', text: 'a   =b\nc \t: d\n', expected: { a: 'b', c: 'd' } },
  { name: 'escaped separators in keys', text: 'a\\=b=c\nd\\:e:f\ng\\ h i\n\\ j=k\n', expected: { 'a=b': 'c', 'd:e': 'f', 'g h': 'i', ' j': 'k' } },
  { name: 'separators inside values are literal', text: 'url=http://h:9200/x?a=b\n', expected: { url: 'http://h:9200/x?a=b' } },
  { name: 'comments with # and !', text: '# c1\n! c2\n   # indented\n\t! tab\na=b\n', expected: { a: 'b' } },
  { name: '# after a value is not a comment', text: 'a=b # c\n', expected: { a: 'b # c' } },
  { name: 'blank and whitespace-only lines', text: '\n   \n\t\f\na=b\n\n', expected: { a: 'b' } },
  { name: 'continuation strips leading whitespace', text: 'a=one, \\\n      two, \\\n\t three\n', expected: { a: 'one, two, three' } },
  { name: 'escaped backslash at end is not a continuation', text: 'a=x\\\\\nb=y\n', expected: { a: 'x\\', b: 'y' } },
  { name: 'three backslashes: literal one plus continuation', text: 'a=x\\\\\\\n  y\n', expected: { a: 'x\\y' } },
  { name: 'a continued line starting with # is not a comment', text: 'a=b\\\n  #c\n', expected: { a: 'b#c' } },
  { name: 'a comment line ending in a backslash does not continue', text: '# c \\\na=b\n', expected: { a: 'b' } },
  { name: 'continuation into an empty line ends the value', text: 'a=b\\\n\nc=d\n', expected: { a: 'b', c: 'd' } },
  { name: 'continuation at end of input is dropped', text: 'a=b\\', expected: { a: 'b' } },
  { name: 'continuation inside a key', text: 'ke\\\n  y=v\n', expected: { key: 'v' } },
  { name: 'continuation line that is only a backslash', text: 'a=b\\\n  \\\n  c\n', expected: { a: 'bc' } },
  { name: 'character escapes', text: 'a=\\t\\n\\r\\f|\\\\|\\q\\=\\:\\#\\!\\ \n', expected: { a: '\t\n\r\f|\\|q=:#! ' } },
  { name: 'unicode escapes', text: 'a=\\u0041\\u00e9\\u00E9\n\\u006b=v\n', expected: { a: 'Aéé', k: 'v' } },
  { name: 'surrogate pair escapes', text: 'a=\\uD83D\\uDE00\n', expected: { a: '😀' } },
  { name: 'raw UTF-8 text', text: 'grüße=größe ✓\n', expected: { 'grüße': 'größe ✓' } },
  { name: 'CRLF line endings', text: 'a=b\r\nc=d\\\r\n  e\r\n', expected: { a: 'b', c: 'de' } },
  { name: 'CR line endings', text: 'a=b\rc=d\r', expected: { a: 'b', c: 'd' } },
  { name: 'repeated key: last wins', text: 'a=1\na=2\n', expected: { a: '2' } },
  { name: 'no trailing newline', text: 'a=b', expected: { a: 'b' } },
  { name: 'key only with whitespace', text: 'lonely   \n', expected: { lonely: '' } },
];

/** Inputs java.util.Properties rejects (IllegalArgumentException). */
export const MALFORMED_CASES: readonly { readonly name: string; readonly text: string }[] = [
  { name: 'short unicode escape', text: 'a=\\u12\n' },
  { name: 'non-hex unicode escape', text: 'a=\\u12xz\n' },
];
