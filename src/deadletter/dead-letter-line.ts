import type { LockKey, Priority } from '../lock/lock-engine.js';
import type { DeadLetterBody, DeadLetterHeaders, DeadLetterRecord } from './dead-letter-record.js';

/** One line of a dead-letter file: a record, or a later marker that a record was replayed (append-only). */
export type DeadLetterLine =
  | { readonly type: 'record'; readonly record: DeadLetterRecord }
  | { readonly type: 'replayed'; readonly id: string; readonly replayedAt: string; readonly replayStatus: string };

export function serializeDeadLetterLine(line: DeadLetterLine): string {
  return `${JSON.stringify(line)}\n`;
}

/** Reads a line back, checking every field; a reason string when the line is not a valid entry. */
export function parseDeadLetterLine(text: string): DeadLetterLine | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (!isObject(value)) return 'not a JSON object';
  try {
    if (value.type === 'record') return { type: 'record', record: recordOf(field(value, 'record', isObject)) };
    if (value.type === 'replayed') {
      return {
        type: 'replayed',
        id: field(value, 'id', isString),
        replayedAt: field(value, 'replayedAt', isString),
        replayStatus: field(value, 'replayStatus', isString),
      };
    }
    return 'unknown entry type';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Checks a record read from elsewhere (e.g. an index document's `_source`); a reason string when invalid. */
export function parseDeadLetterRecord(value: unknown): DeadLetterRecord | string {
  if (!isObject(value)) return 'not a JSON object';
  try {
    return recordOf(value);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function recordOf(value: Record<string, unknown>): DeadLetterRecord {
  return {
    id: field(value, 'id', isString),
    createdAt: field(value, 'createdAt', isString),
    method: field(value, 'method', isString),
    path: field(value, 'path', isString),
    query: field(value, 'query', isString),
    headers: field(value, 'headers', isHeaders),
    hadCredentials: field(value, 'hadCredentials', isBoolean),
    body: field(value, 'body', isBody),
    priority: field(value, 'priority', isPriority),
    keys: field(value, 'keys', isKeys),
    attempts: field(value, 'attempts', isCount),
    attemptedAt: field(value, 'attemptedAt', isStrings),
    lastError: lastErrorOf(field(value, 'lastError', isObject)),
    replayedAt: field(value, 'replayedAt', isNullableString),
    replayStatus: field(value, 'replayStatus', isNullableString),
  };
}

function lastErrorOf(value: Record<string, unknown>): DeadLetterRecord['lastError'] {
  return { code: field(value, 'code', isString), message: field(value, 'message', isString) };
}

function field<T>(object: Record<string, unknown>, name: string, guard: (value: unknown) => value is T): T {
  const value = object[name];
  if (!guard(value)) throw new Error(`field [${name}] is missing or has the wrong type`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isNullableString(value: unknown): value is string | null {
  return value === null || typeof value === 'string';
}

function isBoolean(value: unknown): value is boolean {
  return typeof value === 'boolean';
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isString);
}

function isPriority(value: unknown): value is Priority {
  return value === 'foreground' || value === 'background';
}

function isKeys(value: unknown): value is LockKey[] {
  return Array.isArray(value) && value.every((key) => isObject(key) && isString(key.index) && isString(key.id));
}

function isHeaders(value: unknown): value is DeadLetterHeaders {
  return isObject(value) && Object.values(value).every((v) => isString(v) || isStrings(v));
}

function isBody(value: unknown): value is DeadLetterBody {
  return isObject(value) && (value.encoding === 'utf8' || value.encoding === 'base64') && isString(value.data);
}
