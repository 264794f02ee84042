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

/**
 * Sends the write that holds a document's lock while `gate` keeps it inside the cluster, and
 * resolves once it is there, with its answer still to come. It is sent as background: these tests
 * shorten the foreground timeout, and a first acquisition on a fresh ZooKeeper session can take
 * longer than that on a loaded machine. Answered before it reached the gate, it fails at once
 * instead of leaving the test waiting for an arrival that will not come.
 */
export async function sendHolder(
  gate: { arrived(count?: number): Promise<void> },
  baseUrl: string,
  path: string,
  body: unknown,
): Promise<{ readonly answer: Promise<WriteResponse> }> {
  const answer = send(baseUrl, 'PUT', path, body, BACKGROUND);
  const answeredEarly = answer.then((early) => {
    throw new Error(`the holder of ${path} was answered ${early.status} before it reached the cluster`);
  });
  await Promise.race([gate.arrived(1), answeredEarly]);
  return { answer };
}
