/** Small fetch helpers for the write-path tests. */
export interface WriteResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly json: Record<string, unknown>;
}

export async function send(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<WriteResponse> {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(text !== undefined ? { body: text } : {}),
    ...(signal !== undefined ? { signal } : {}),
  });
  const raw = await response.text();
  return { status: response.status, headers: response.headers, json: raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>) };
}

export function ndjson(lines: readonly unknown[]): string {
  return lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
}

export const BACKGROUND = { 'X-Lock-Type': 'background' } as const;
export const FOREGROUND = { 'X-Lock-Type': 'foreground' } as const;
