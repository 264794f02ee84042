import { DateMathError } from './date-math-error.js';
import { compileDatePattern, type DatePrinter } from './java-date-pattern.js';
import { evaluateNowMath } from './now-math.js';
import { zoneOf, type Zone } from './zone-offset.js';

const UTC = zoneOf('Z');
/** Elasticsearch's default: `uuuu.MM.dd` (DEFAULT_DATE_FORMATTER). */
const DEFAULT_PRINTER = compileDatePattern('uuuu.MM.dd');

/** Whether Elasticsearch reads `name` as date math at all: it starts with `<` and ends with `>`. */
export function isDateMathName(name: string): boolean {
  return name.startsWith('<') && name.endsWith('>');
}

/**
 * The concrete index name of a (URL-decoded) index name at `nowMs`, exactly as Elasticsearch's
 * IndexNameExpressionResolver.DateMathExpressionResolver.resolveExpression computes it: a name that
 * is not `<…>` is returned as is; in `<static{math{format|zone}}static>` `\` escapes the next
 * character, `{…}` is a placeholder whose math starts from `now` and whose format defaults to
 * `uuuu.MM.dd` in UTC. Elasticsearch:
 * server/src/main/java/org/elasticsearch/cluster/metadata/IndexNameExpressionResolver.java
 * (DateMathExpressionResolver.doResolveExpression, the same error messages) and
 * server/src/test/java/org/elasticsearch/cluster/metadata/DateMathExpressionResolverTests.java.
 *
 * Throws DateMathError: `invalid` where Elasticsearch throws ElasticsearchParseException (400
 * `parse_exception`), `unsupported` for a format or math the proxy does not evaluate.
 */
export function resolveDateMathName(name: string, nowMs: number): string {
  if (!isDateMathName(name)) return name;
  const text = name.slice(1, -1);
  let escape = false;
  let inDateFormat = false;
  let inPlaceHolder = false;
  let resolved = '';
  let placeHolder = '';
  for (let i = 0; i < text.length; i++) {
    const escapedChar = escape;
    escape = false;
    const c = text.charAt(i);
    if (c === '\\') {
      if (escapedChar) resolved += c;
      else escape = true;
      continue;
    }
    if (inPlaceHolder) {
      if (c === '{') {
        if (inDateFormat && escapedChar) placeHolder += c;
        else if (!inDateFormat) {
          inDateFormat = true;
          placeHolder += c;
        } else throw DateMathError.invalid(`invalid dynamic name expression [${name.slice(1)}]. invalid character in placeholder at position [${i + 1}]`);
      } else if (c === '}') {
        if (inDateFormat && escapedChar) placeHolder += c;
        else if (inDateFormat) {
          inDateFormat = false;
          placeHolder += c;
        } else {
          resolved += evaluatePlaceHolder(placeHolder, nowMs);
          placeHolder = '';
          inPlaceHolder = false;
        }
      } else placeHolder += c;
    } else if (c === '{') {
      if (escapedChar) resolved += c;
      else inPlaceHolder = true;
    } else if (c === '}' && !escapedChar) {
      throw DateMathError.invalid(
        `invalid dynamic name expression [${name.slice(1)}]. invalid character at position [${i + 1}]. \`{\` and \`}\` are reserved characters and should be escaped when used as part of the index name using \`\\\` (e.g. \`\\{text\\}\`)`,
      );
    } else resolved += c;
  }
  if (inPlaceHolder) throw DateMathError.invalid(`invalid dynamic name expression [${name.slice(1)}]. date math placeholder is open ended`);
  if (resolved.length === 0) throw DateMathError.invalid('nothing captured');
  return resolved;
}

/** One `{math{format|zone}}` placeholder's text (without its outer braces), printed. */
function evaluatePlaceHolder(placeHolder: string, nowMs: number): string {
  const formatStart = placeHolder.indexOf('{');
  let math = placeHolder;
  let printer: DatePrinter = DEFAULT_PRINTER;
  let zone: Zone = UTC;
  if (formatStart >= 0) {
    if (placeHolder.lastIndexOf('}') !== placeHolder.length - 1) throw DateMathError.invalid(`invalid dynamic name expression [${placeHolder}]. missing closing \`}\` for date math format`);
    if (formatStart === placeHolder.length - 2) throw DateMathError.invalid(`invalid dynamic name expression [${placeHolder}]. missing date format`);
    math = placeHolder.slice(0, formatStart);
    const patternAndZone = placeHolder.slice(formatStart + 1, -1);
    const separator = patternAndZone.indexOf('|');
    const pattern = separator < 0 ? patternAndZone : patternAndZone.slice(0, separator);
    if (separator >= 0) zone = zoneOrRefuse(patternAndZone.slice(separator + 1));
    printer = compileDatePattern(pattern);
  }
  return evaluateNowMath(math, nowMs, zone, printer);
}

function zoneOrRefuse(id: string): Zone {
  try {
    return zoneOf(id);
  } catch (error) {
    throw DateMathError.unsupported(`time zone [${id}] of a date-math index name: ${error instanceof Error ? error.message : String(error)}`);
  }
}
